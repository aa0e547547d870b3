"""CLI mode of run_e2e.py: runs a test program through `memtrack run --json`, reads the JSON
report and checks it (and the text report the CLI prints on stderr) against the program's
directives. Standard library only.
"""

import copy
import json
import os
import re
from dataclasses import dataclass, field

import e2e_case
import json_schema

_REPORT_LINE = re.compile(r"^==(\d+)==(?: (.*))?$")  # the CLI's text report
_DIAGNOSTIC = re.compile(r"^memtrack\[\d+\]: ")  # the runtime's
_TOOL_MESSAGE = re.compile(r"^memtrack: ")  # the CLI's own (errors, warnings)
MAX_JSON_SHOWN = 20000  # characters of the JSON report printed with a failure


@dataclass
class JsonFrame:
    function: str
    file: str
    line: int
    inlined: bool
    address: str

    def describe(self):
        where = f"{os.path.basename(self.file)}:{self.line}" if self.file else "??"
        return f"{self.function or '??'} ({where}{', inlined' if self.inlined else ''})"


@dataclass(eq=False)  # groups compare by identity: two may look the same
class JsonGroup:
    bytes: int
    blocks: int
    frames: list

    def describe(self):
        shown = e2e_case.frames_to_main(self.frames)
        more = len(self.frames) - len(shown)
        return (f"{e2e_case.format_counts(self.bytes, self.blocks)} | "
                + " ".join(f.describe() for f in shown) + (f" +{more} below main" if more else ""))


@dataclass(eq=False)
class JsonResource:
    fd: int
    text: str  # as the text reports print it after "fd N: "
    frames: list

    def describe(self):
        shown = e2e_case.frames_to_main(self.frames)
        return f"fd {self.fd}: {self.text} | " + " ".join(f.describe() for f in shown)


@dataclass
class JsonReport:
    pid: int
    how: str  # in the words of the text mode's EXPECT-HOW: exit, _exit with status N, ...
    code: int | None
    leaked: tuple  # (bytes, blocks, groups)
    groups: list
    notes: list = field(default_factory=list)  # the process's text report lines on stderr
    resources: list = field(default_factory=list)  # JsonResource


def how_of(exit):
    """A JSON `exit` object in the words of EXPECT-HOW."""
    if "signal" in exit:
        return f"killed by signal {exit['signal']}"
    if "code" not in exit:
        return "unknown"
    if exit.get("how", "exit") == "exit":
        return "exit"
    return f"{exit['how']} with status {exit['code']}"


def frames_of(stack):
    return [JsonFrame(f["function"], f["file"], f["line"], f["inlined"], f["address"])
            for f in stack]


def resource_text(r):
    """The resource as the text reports print it: 'file /tmp/x, fopen("w")'."""
    how = f'"{r["flags"]}"' if r["stream"] else r["flags"]
    return f"{r['kind']} {r['path']}, {r['call']}({how})"


def as_report(process, text_lines):
    groups = [JsonGroup(leak["bytes"], leak["blocks"], frames_of(leak["stack"]))
              for leak in process["leaks"]]
    resources = [JsonResource(r["fd"], resource_text(r), frames_of(r["stack"]))
                 for r in process.get("resources", [])]
    summary = process["summary"]
    return JsonReport(process["pid"], how_of(process["exit"]), process["exit"].get("code"),
                      (summary["leaked_bytes"], summary["leaked_blocks"], len(groups)), groups,
                      text_lines.get(process["pid"], []), resources)


def split_stderr(stderr):
    """-> ({pid: text report lines}, runtime diagnostics, CLI messages, the rest)."""
    reports, diagnostics, messages, other = {}, [], [], []
    for line in stderr.splitlines(keepends=True):
        if m := _REPORT_LINE.match(line.rstrip("\n")):
            reports.setdefault(int(m.group(1)), []).append(m.group(2) or "")
        elif _DIAGNOSTIC.match(line):
            diagnostics.append(line)
        elif _TOOL_MESSAGE.match(line):
            messages.append(line)
        else:
            other.append(line)
    return reports, diagnostics, messages, "".join(other)


def check_consistency(document, cli_pid, program, text_pids, failures):
    """What must hold for every run: the started program comes first, as a child of the CLI;
    summaries add up; groups are sorted and of a shown kind (definite, indirect, possible by
    default: reachable ones are counted, not listed); an inlined frame shares its
    address with the frame it was inlined into; each process has a text report too."""
    processes = document["processes"]
    if processes and (processes[0]["ppid"], processes[0]["command"]) != (cli_pid, [program]):
        failures.append(f"first process is not the started program: ppid "
                        f"{processes[0]['ppid']} (CLI pid {cli_pid}), command "
                        f"{processes[0]['command']}")
    for p in processes:
        where = f"pid {p['pid']}"
        for kind in ("leaks", "suppressed"):
            groups, summary = p[kind], p["summary"]
            prefix = "leaked" if kind == "leaks" else "suppressed"
            totals = (sum(g["bytes"] for g in groups), sum(g["blocks"] for g in groups))
            if totals != (summary[f"{prefix}_bytes"], summary[f"{prefix}_blocks"]):
                failures.append(f"{where}: {kind} add up to {totals}, summary says "
                                f"{summary[f'{prefix}_bytes'], summary[f'{prefix}_blocks']}")
            # The sampled mode ranks sites by their estimates, the blocks not sampled last.
            order = [(g.get("sampling") == "not_sampled",
                      -(g["estimated_bytes"] if g.get("sampling") == "estimated"
                        else g["bytes"] + g["indirect_bytes"]),
                      -(g["estimated_blocks"] if g.get("sampling") == "estimated" else 0),
                      -g["blocks"]) for g in groups]
            if order != sorted(order):
                failures.append(f"{where}: {kind} not sorted largest first")
            for group in groups:
                if group["kind"] not in ("definite", "indirect", "possible"):
                    failures.append(f"{where}: {kind} group of kind {group['kind']!r}")
                stack = group["stack"]
                for frame, caller in zip(stack, stack[1:] + [None]):
                    if frame["inlined"] and (caller is None
                                             or caller["address"] != frame["address"]):
                        failures.append(f"{where}: inlined frame {frame['function']} is not "
                                        f"followed by a frame at its address {frame['address']}")
        if len(p.get("resources", [])) != p["summary"]["open_descriptors"]:
            failures.append(f"{where}: {len(p.get('resources', []))} resources, summary says "
                            f"{p['summary']['open_descriptors']}")
    json_pids = {p["pid"] for p in processes}
    if json_pids != set(text_pids):
        failures.append(f"pids with a JSON report {sorted(json_pids)}, with a text report "
                        f"{sorted(text_pids)}")


def check_cli(case, args, temp_dir, run_options=(), json_name="report.json"):
    """Returns (failures, the CLI's CompletedProcess, extra text to show on failure, the JSON
    document or None). `run_options`: more options of `memtrack run`."""
    program = os.path.abspath(args.program)
    env = e2e_case.plain_environment()
    plain, _ = e2e_case.run([os.path.abspath(args.plain_program or program)], env, temp_dir)
    env["MEMTRACK_RUNTIME"] = os.path.abspath(args.runtime)  # the one the text mode tests
    if case.options:
        env["MEMTRACK_OPTIONS"] = ":".join(case.options)  # the CLI adds its own after these
    json_path = os.path.join(temp_dir, json_name)
    traced, cli_pid = e2e_case.run([os.path.abspath(args.cli), "run", f"--json={json_path}",
                                    *run_options, "--", program], env, temp_dir)

    failures = []
    if case.report_file:
        failures.append("EXPECT-REPORT-FILE cannot hold under the CLI (give 'CLI: skip')")
    text_reports, diagnostics, messages, other = split_stderr(traced.stderr)
    failures += [f"memtrack printed: {m.rstrip()}" for m in messages]
    e2e_case.check_diagnostics(case, diagnostics, failures)
    e2e_case.check_exit(case, traced, failures)
    e2e_case.compare_plain(case, plain, traced, other, failures)
    try:
        with open(json_path, encoding="utf-8") as f:
            raw = f.read()
        document = json.loads(raw)
    except (OSError, ValueError) as e:
        return failures + [f"no JSON report: {e}"], traced, "", None
    shown = raw if len(raw) <= MAX_JSON_SHOWN else raw[:MAX_JSON_SHOWN] + "\n[... cut]\n"
    extra = f"--- {json_path} ---\n{shown}"
    check_document(case, document, cli_pid, program, text_reports, failures)
    return failures, traced, extra, document


# The summary's exact totals, which the sampled mode must give as the full mode does.
KINDS = ("definite", "indirect", "possible", "reachable")


def exact_totals(summary, case, fold_suppressed):
    """The totals the two modes must agree on. Suppressions match sampled blocks only (they
    need a stack; docs/sampling.md), so with something suppressed the kinds are compared with
    the suppressed blocks added back. Under a metadata budget (max_metadata_mb) the modes
    spend it differently, so which of the runtime's own blocks got tracked may differ: only
    the leaked kinds are compared."""
    kinds = KINDS[:3] if any("max_metadata_mb" in o for o in case.options) else KINDS
    if fold_suppressed:
        return {"all kinds and suppressed": (
            sum(summary[f"{k}_bytes"] for k in kinds) + summary["suppressed_bytes"],
            sum(summary[f"{k}_blocks"] for k in kinds) + summary["suppressed_blocks"])}
    totals = {f"{k}_{unit}": summary[f"{k}_{unit}"] for k in kinds for unit in ("bytes", "blocks")}
    totals["leaked"] = (summary["leaked_bytes"], summary["leaked_blocks"])
    return totals


def check_sampled(case, args, temp_dir):
    """The sampled mode (--sample): the case's expectations that do not depend on stacks
    (groups are estimates there) and, per process, the summary's totals equal to a run in the
    full mode. The sampler's seed is fixed, and its interval small, so that some blocks of
    most programs are sampled and some are not."""
    full_case = copy.deepcopy(case)
    failures, _, _, full = check_cli(full_case, args, temp_dir)
    failures = [f"full mode: {f}" for f in failures]
    case.drop_expectations("GROUP", "GROUPS", "FRAMES")
    if full is not None and any(p["summary"]["suppressed_blocks"] for p in full["processes"]):
        case.drop_expectations("LEAKED")  # see exact_totals
    sampled_failures, traced, extra, sampled = check_cli(
        case, args, temp_dir, [f"--sample={args.sample}", "--sample-seed=1"], "sampled.json")
    failures += sampled_failures
    if full is None or sampled is None:
        return failures, traced, extra
    if len(full["processes"]) != len(sampled["processes"]):
        failures.append(f"{len(sampled['processes'])} processes sampled, "
                        f"{len(full['processes'])} in full")
    for i, (a, b) in enumerate(zip(full["processes"], sampled["processes"])):
        fold = a["summary"]["suppressed_blocks"] > 0
        want = exact_totals(a["summary"], case, fold)
        have = exact_totals(b["summary"], case, fold)
        diff = {k: (want[k], have.get(k)) for k in want if want[k] != have.get(k)}
        if diff:
            failures.append(f"process {i}: totals differ from the full mode (full, sampled): "
                            f"{diff}")
    for p in sampled["processes"]:
        if p.get("sampling", {}).get("interval_bytes") != parse_size(args.sample):
            failures.append(f"pid {p['pid']}: no sampling object with the interval asked for")
    return failures, traced, extra


def parse_size(text):
    units = {"": 1, "KiB": 1024, "MiB": 1 << 20}
    number = text.rstrip("KiMB")
    return int(number) * units[text[len(number):]]


def check_document(case, document, parent_pid, program, text_reports, failures):
    """The checks of a JSON report against the case's directives; `parent_pid` started
    `program`, the first process."""
    errors = json_schema.Schema().check(document)
    if errors:  # the checks below would only stumble over the same problems
        failures += [f"JSON schema: {e}" for e in errors]
        return
    check_consistency(document, parent_pid, program, text_reports, failures)
    reports = [as_report(p, text_reports) for p in document["processes"]]
    main = reports[0] if reports else None
    if main is not None and main.code is not None and main.code != case.exit:
        failures.append(f"JSON exit code of the started program {main.code}, expected {case.exit}")
    for label, expectations in case.expect.items():  # the JSON cannot tell _Exit from _exit
        case.expect[label] = [(k, v.replace("_Exit ", "_exit ", 1) if k == "HOW" else v, t)
                              for k, v, t in expectations]
    e2e_case.check_processes(case, reports, main.pid if main else None, failures)
