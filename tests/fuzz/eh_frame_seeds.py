"""Seeds for the unwind_rule fuzzer, cut from real ELF files at test time: a module's
.eh_frame_hdr and .eh_frame as they lie in memory, each seed aimed at the start, inside or just
past one function of the search table (input format: core/unwind_rule_fuzz.cpp)."""

import os
import struct


def sections(data):
    """name -> (file offset, address, size) of an ELF64 little-endian file's sections."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return {}
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
               for i in range(shnum)]
    names_offset = headers[shstrndx][4]
    out = {}
    for name, _, _, addr, offset, size, *_ in headers:
        end = data.index(b"\0", names_offset + name)
        out[data[names_offset + name:end].decode()] = (offset, addr, size)
    return out


def write_seeds(elf_path, corpus, per_module=18):
    """Writes up to `per_module` seeds from `elf_path` into `corpus`; returns how many."""
    with open(elf_path, "rb") as f:
        data = f.read()
    found = sections(data)
    if ".eh_frame_hdr" not in found or ".eh_frame" not in found:
        return 0
    hdr_off, hdr_addr, hdr_size = found[".eh_frame_hdr"]
    frame_off, frame_addr, frame_size = found[".eh_frame"]
    if frame_addr - hdr_addr != frame_off - hdr_off:
        return 0  # not laid out in memory as in the file
    start = min(hdr_off, frame_off)
    tables = data[start:max(hdr_off + hdr_size, frame_off + frame_size)]
    hdr = hdr_off - start
    version, _, count_encoding, table_encoding = tables[hdr:hdr + 4]
    if version != 1 or count_encoding != 0x03 or table_encoding != 0x3b:
        return 0
    count, = struct.unpack_from("<I", tables, hdr + 8)
    picks = sorted({0, 1, count // 3, count // 2, count - 2, count - 1} & set(range(count)))
    written = 0
    for i in picks:
        start_rel, = struct.unpack_from("<i", tables, hdr + 12 + 8 * i)
        function = hdr + start_rel  # the function's address relative to the tables' first byte
        for delta in (0, 5, 64):
            if written == per_module:
                return written
            name = f"{os.path.basename(elf_path)}-{i}-{delta}"
            with open(os.path.join(corpus, name), "wb") as f:
                f.write(struct.pack("<qI", function + delta, hdr) + tables)
            written += 1
    return written
