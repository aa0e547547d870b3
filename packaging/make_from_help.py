#!/usr/bin/env python3
"""Writes memtrack's man page (roff) and its bash completion from the help the built memtrack
prints: the help comes from the option table (cli/option_table.cpp), so both follow every
option without a list of their own. Run at build time (packaging/CMakeLists.txt).

  make_from_help.py --memtrack BIN --version V --man memtrack.1 --completion memtrack.bash
"""
import argparse
import re
import subprocess
import sys


class Command:
    def __init__(self, name, summary):
        self.name = name
        self.summary = summary
        self.usage = ""
        self.options = []  # (names, placeholder, description)
        self.footer = []


def help_text(memtrack, *args):
    result = subprocess.run([memtrack, *args, "--help"], capture_output=True, text=True,
                            check=False)
    if result.returncode != 0 or not result.stdout:
        sys.exit(f"make_from_help.py: {memtrack} {' '.join(args)} --help failed: {result.stderr}")
    return result.stdout


def commands_of(top_help):
    commands = []
    in_list = False
    for line in top_help.splitlines():
        if line.startswith("Subcommands:"):
            in_list = True
        elif in_list and line.startswith("  "):
            name, summary = line.strip().split(None, 1)
            commands.append(Command(name, summary.strip()))
    if not commands:
        sys.exit("make_from_help.py: memtrack --help lists no commands")
    return commands


# "  --name VALUE   description" or "  -d,--delay SECONDS  description"; long entries put the
# description on the next lines, indented further.
OPTION = re.compile(r"^  (-[^ ]+)(?: ([^ ].*?))?(?:  +(.*))?$")


def parse_command(command, text):
    lines = text.splitlines()
    section = "head"
    for line in lines[1:]:
        if line.startswith("Usage: "):
            command.usage = line.removeprefix("Usage: ")
        elif line == "Options:" or line.startswith("Positionals:"):
            section = "options" if line == "Options:" else "positionals"
        elif section in ("options", "positionals") and line == "":
            section = "after"
        elif section == "options" and line.startswith("  -"):
            match = OPTION.match(line)
            names = match.group(1).split(",")
            command.options.append([names, (match.group(2) or "").strip(),
                                    (match.group(3) or "").strip()])
        elif section == "options" and line.startswith("    ") and command.options:
            text_so_far = command.options[-1][2]
            command.options[-1][2] = (text_so_far + " " + line.strip()).strip()
        elif section == "after":
            command.footer.append(line)


def roff(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text.startswith((".", "'")) else text


def man_page(commands, version):
    out = [
        f'.TH MEMTRACK 1 "" "memtrack {version}" "User Commands"',
        ".SH NAME",
        "memtrack \\- find memory leaks in native Linux programs without recompiling them",
        ".SH SYNOPSIS",
    ]
    for c in commands:
        rest = c.usage.removeprefix(f"memtrack {c.name}").strip()
        out += [".B " + roff(f"memtrack {c.name}"), roff(rest), ".br"]
    out += [
        ".SH DESCRIPTION",
        "memtrack runs a program with its runtime preloaded (or linked in) and reports the heap "
        "blocks it leaked, grouped by allocation site with demangled stacks to file:line, as "
        "valgrind's memcheck classifies them (definitely, indirectly, possibly lost, still "
        "reachable), with descriptors left open and allocator misuse. It also monitors the "
        "memory of running processes (top, ui), takes reports from running programs "
        "(snapshot), and attaches to a process that is already running (attach, detach).",
        ".SH COMMANDS",
    ]
    for c in commands:
        out += [".SS " + roff(f"memtrack {c.name}"), roff(c.summary) + ".", ".PP",
                "Usage: " + roff(c.usage)]
        for names, placeholder, description in c.options:
            label = ", ".join("\\fB" + roff(n) + "\\fR" for n in names)
            if placeholder:
                label += " \\fI" + roff(placeholder) + "\\fR"
            out += [".TP", label, roff(description)]
        footer = [line for line in c.footer if line.strip()]
        if footer:
            out += [".PP", ".nf"] + [roff(line) for line in footer] + [".fi"]
    out += [
        ".SH ENVIRONMENT",
        ".TP", "\\fBMEMTRACK_OPTIONS\\fR",
        "The runtime's options, colon-separated (name=value); memtrack run sets them from its "
        "command line.",
        ".TP", "\\fBMEMTRACK_RUNTIME\\fR",
        "The libmemtrack.so to preload instead of the installed one.",
        ".TP", "\\fBLSAN_OPTIONS\\fR",
        "LeakSanitizer's options that memtrack understands (suppressions, exitcode, ...).",
        ".SH EXIT STATUS",
        "The program's own, or the --error-exitcode value when it applies; 125 when memtrack "
        "itself fails (bad option, unwritable output, missing program).",
        ".SH SEE ALSO",
        ".BR valgrind (1),",
        ".BR heaptrack (1).",
        "The documentation installed with memtrack (README.md, docs/).",
        "",
    ]
    return "\n".join(out)


def completion(commands):
    cases = []
    for c in commands:
        names = []
        choices = []
        for option_names, placeholder, _ in c.options:
            names += option_names
            if "|" in placeholder and " " not in placeholder:
                for n in option_names:
                    choices.append(f'      {n}) COMPREPLY=($(compgen -W "{placeholder.replace("|", " ")}" '
                                   f'-- "$cur")); return ;;')
        cases.append(f"    {c.name})\n      options=\"{' '.join(names)}\"\n      case \"$prev\" in\n"
                     + "\n".join(choices) + ("\n" if choices else "") + "      esac\n      ;;")
    command_names = " ".join(c.name for c in commands)
    return f"""# bash completion for memtrack, made from its --help (packaging/make_from_help.py).
_memtrack() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W "{command_names} --help --version" -- "$cur"))
    return
  fi
  local options="" i
  # After `memtrack run [OPTIONS] PROG` (or --), the words are the program's: complete files.
  if [[ ${{COMP_WORDS[1]}} == run ]]; then
    for ((i = 2; i < COMP_CWORD; i++)); do
      if [[ ${{COMP_WORDS[i]}} == -- ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
        return
      fi
    done
  fi
  case ${{COMP_WORDS[1]}} in
{chr(10).join(cases)}
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}}
complete -o filenames -F _memtrack memtrack
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--memtrack", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--man", required=True)
    parser.add_argument("--completion", required=True)
    args = parser.parse_args()
    commands = commands_of(help_text(args.memtrack))
    for c in commands:
        parse_command(c, help_text(args.memtrack, c.name))
    with open(args.man, "w", encoding="utf-8") as f:
        f.write(man_page(commands, args.version))
    with open(args.completion, "w", encoding="utf-8") as f:
        f.write(completion(commands))
    return 0


if __name__ == "__main__":
    sys.exit(main())
