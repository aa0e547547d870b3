#!/usr/bin/env python3
"""Fetches only the browser libraries the HTML report embeds at build time (d3, d3-flame-graph,
uPlot: report/CMakeLists.txt) into web/node_modules, without Node.js: each package's tarball
from the npm registry, checked against the integrity hash web/package-lock.json pins, then
unpacked. What `make demo` uses; `make test` installs Node.js and runs `npm ci` for the test
tools as well (scripts/install-web-deps.sh), which replaces these with the same files.

Idempotent: a package whose installed package.json has the pinned version is left alone.
The registry is $npm_config_registry when set, else https://registry.npmjs.org/.
"""
import base64
import hashlib
import io
import json
import os
import pathlib
import shutil
import sys
import tarfile
import urllib.error
import urllib.request

EMBEDDED = ("d3", "d3-flame-graph", "uplot")
WEB = pathlib.Path(__file__).resolve().parent.parent / "web"


def fail(message):
    print(f"fetch-web-assets: error: {message}", file=sys.stderr)
    sys.exit(1)


def installed_version(name):
    try:
        with open(WEB / "node_modules" / name / "package.json", encoding="utf-8") as f:
            return json.load(f).get("version")
    except (OSError, ValueError):
        return None


def verified_tarball(name, version, integrity, registry):
    algorithm, _, expected = integrity.partition("-")
    if algorithm != "sha512":
        fail(f"package-lock.json pins {name} with {algorithm}, not sha512")
    url = f"{registry}{name}/-/{name}-{version}.tgz"
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            data = response.read()
    except (urllib.error.URLError, OSError) as e:
        fail(f"cannot download {url}: {e} (is the npm registry reachable? set "
             "npm_config_registry for a mirror)")
    digest = base64.b64encode(hashlib.sha512(data).digest()).decode()
    if digest != expected:
        fail(f"{url} does not match the integrity hash in web/package-lock.json")
    return data


def unpack(name, data):
    target = WEB / "node_modules" / name
    staging = target.with_name(f".{name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member in archive.getmembers():
            # npm tarballs hold package/...; nothing may land outside the package's folder.
            parts = pathlib.PurePosixPath(member.name).parts
            if len(parts) < 2 or ".." in parts or member.issym() or member.islnk():
                continue
            if not (member.isfile() or member.isdir()):
                continue
            out = staging.joinpath(*parts[1:])
            if member.isdir():
                out.mkdir(parents=True, exist_ok=True)
                continue
            out.parent.mkdir(parents=True, exist_ok=True)
            with archive.extractfile(member) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)


def main():
    try:
        with open(WEB / "package-lock.json", encoding="utf-8") as f:
            lock = json.load(f)["packages"]
    except (OSError, ValueError, KeyError) as e:
        fail(f"cannot read web/package-lock.json: {e}")
    registry = os.environ.get("npm_config_registry") or "https://registry.npmjs.org/"
    if not registry.endswith("/"):
        registry += "/"
    fetched = []
    for name in EMBEDDED:
        entry = lock.get(f"node_modules/{name}")
        if entry is None or "version" not in entry or "integrity" not in entry:
            fail(f"web/package-lock.json has no pinned {name}")
        if installed_version(name) == entry["version"]:
            continue
        unpack(name, verified_tarball(name, entry["version"], entry["integrity"], registry))
        fetched.append(f"{name} {entry['version']}")
    if fetched:
        print(f"fetch-web-assets: {', '.join(fetched)} from {registry}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
