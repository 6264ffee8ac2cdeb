#!/usr/bin/env python3
"""Checks the xlnetc commands the docs show against the binaries' --help.

Every command line of README.md and docs/*.md that runs xlnetc, xlnetc-run
or xlnet-opt — in a fenced block (after an optional `$ `, environment
assignments, `mpirun -np N` or a `build/bin/` prefix) or in an inline code
span — is parsed: its subcommand must exist and every --flag it passes must
be one its `--help` lists. A renamed or removed flag, or a subcommand that
went away, then fails the test that runs this (test/Tools/doc-commands.test)
instead of misleading a reader. Synopsis notation ([...], A|B, ...,
placeholders) is understood; the values are not checked.

With --run FILE --section TITLE --root DIR it also runs, as written, the
commands of the first fenced block under the heading TITLE of FILE (docs/
Testing.md "Run": the tour of the host commands), one after another from
DIR, a directory laid out like the repository (build/bin, models,
../shared/golden); an `mpirun` command is skipped (test/Training's mpi
tests run data parallel where MPI is installed). Each prints "ok" or
"FAILED" with the end of its output.

With --run-concrete (and --root) it also runs, in document order, every
command of FILE_OR_DIR... that is concrete: it names no placeholder (an
upper-case word such as SPEC or N, [...], A|B, ..., <...>) and gives its
subcommand a file (a path or a name with an extension; or it is
`devices`), run with ROOT/build/bin first on PATH. Commands that need a GPU
(`--device cuda`) or MPI are skipped, saying so; one the --run block already
ran is not run twice.

usage: doc_commands.py --bin DIR [--list] [--run FILE --section TITLE --root DIR]
                       [--run-concrete --root DIR] [FILE_OR_DIR...]
Prints one line per problem (path:line: the command: what is wrong) and a
summary; exits 1 when there is a problem.
"""
import argparse
import os
import re
import subprocess
import sys

PROGRAMS = ("xlnetc", "xlnetc-run", "xlnet-opt")
# A command's start: optional $ prompt, VAR=value assignments, an mpirun
# prefix, a path to the binary.
START = re.compile(
    r"^(?:\$\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*"
    r"(?:mpirun(?:\s+--?[\w-]+(?:[ =]\S+)?)*\s+)?"
    r"(?:\S*/)?(xlnetc-run|xlnetc|xlnet-opt)(?=\s|$)(.*)$")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def commands(path):
    """(line number, program, rest of the line) of each documented command."""
    out = []
    fenced = False
    with open(path, encoding="utf-8") as f:
        lines = list(enumerate(f, 1))
    # A fenced command continued with a trailing backslash is one command.
    joined = []
    for n, line in lines:
        if joined and joined[-1][1].rstrip().endswith("\\") and \
                not line.lstrip().startswith("```"):
            prev_n, prev = joined[-1]
            joined[-1] = (prev_n, prev.rstrip()[:-1] + " " + line.strip() + "\n")
        else:
            joined.append((n, line))
    for n, line in joined:
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            text = line.strip()
            # A comment after the command is not part of it.
            text = re.sub(r"\s+#\s.*$", "", text)
            m = START.match(text)
            if m:
                out.append((n, m.group(1), m.group(2), text))
            continue
        for span in re.findall(r"`([^`]+)`", line):
            m = START.match(span.strip())
            if m:
                out.append((n, m.group(1), m.group(2), span.strip()))
    return out


class Help:
    """The subcommands and flags of each program, from --help."""

    def __init__(self, bin_dir):
        self.bin_dir = bin_dir
        self.cache = {}

    def text(self, program, sub):
        key = (program, sub)
        if key not in self.cache:
            argv = [os.path.join(self.bin_dir, program)] + ([sub] if sub else []) + ["--help"]
            r = subprocess.run(argv, capture_output=True, text=True)
            self.cache[key] = (r.returncode, r.stdout + r.stderr)
        return self.cache[key]

    def subcommands(self, program):
        rc, text = self.text(program, None)
        subs = set()
        in_subs = False
        for line in text.splitlines():
            if line.startswith("Subcommands:"):
                in_subs = True
                continue
            if in_subs:
                m = re.match(r"^\s+([a-z][a-z0-9-]*)\s", line)
                if m:
                    subs.add(m.group(1))
                elif line.strip() and not line.startswith(" "):
                    in_subs = False
        return subs

    def flags(self, program, sub):
        rc, text = self.text(program, sub)
        return set(FLAG.findall(text)) if rc == 0 else None


def check(entry, help_):
    """The problem of one command, or None."""
    n, program, rest, text = entry
    words = rest.split()
    if program == "xlnet-opt":
        sub = None
    else:
        subs = help_.subcommands(program)
        sub = words[0] if words and not words[0].startswith("-") else None
        if sub is None:
            # `xlnetc --help` and the like name no subcommand.
            flags = help_.flags(program, None)
            if flags is None:
                return f"{program} --help failed"
            bad = [f for f in FLAG.findall(rest) if f not in flags]
            return f"{program} takes no {', '.join(bad)}" if bad else None
        sub = sub.strip("[]|`,.;:")
        if sub not in subs:
            return f"{program} has no subcommand '{sub}' (it has {', '.join(sorted(subs))})"
    flags = help_.flags(program, sub)
    if flags is None:
        return f"{program} {sub or ''} --help failed"
    bad = []
    for f in FLAG.findall(rest):
        if f not in flags and f not in bad:
            bad.append(f)
    if bad:
        what = f"{program} {sub}" if sub else program
        return f"{what} has no {', '.join(bad)}"
    return None


def section_block(path, title):
    """(line, command) of the first fenced block under heading `title`."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = next((i for i, l in enumerate(lines)
                  if re.match(r"^#+\s+" + re.escape(title) + r"\s*$", l)), None)
    if start is None:
        raise SystemExit(f"{path}: no heading '{title}'")
    fence = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    block, i = [], fence + 1
    while i < len(lines) and not lines[i].startswith("```"):
        line, n = lines[i], i + 1
        while line.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line.rstrip()[:-1] + " " + lines[i].strip()
        # A comment after the command is not part of it.
        line = re.sub(r"\s+#\s.*$", "", line).strip()
        if line:
            block.append((n, line))
        i += 1
    return block


def run_one(path, n, cmd, root):
    """Runs one documented command from `root`; whether it failed."""
    if cmd.startswith("mpirun"):
        print(f"skipped (MPI): {cmd}")
        return False
    if re.search(r"--device[ =]cuda\b", cmd):
        print(f"skipped (GPU): {cmd}")
        return False
    # As a user with the build on PATH runs it (xlnetc, xlnetc-run).
    env = dict(os.environ, PATH=os.path.join(root, "build", "bin") + os.pathsep +
               os.environ.get("PATH", ""))
    r = subprocess.run(["bash", "-c", cmd], cwd=root, capture_output=True, text=True, env=env)
    if r.returncode == 0:
        print(f"ok: {cmd}")
        return False
    tail = "\n    ".join((r.stdout + r.stderr).strip().splitlines()[-5:])
    print(f"FAILED ({path}:{n}, exit {r.returncode}): {cmd}\n    {tail}")
    return True


def run_block(path, title, root):
    """Runs the block's commands from `root`: (the number that failed, the
    commands run)."""
    block = section_block(path, title)
    return sum(run_one(path, n, cmd, root) for n, cmd in block), {c for _, c in block}


PLACEHOLDER = re.compile(r"(?<![\w.-])[A-Z][A-Z0-9_]*(?![\w.-])|[\[\]|<>]|\.\.\.")
NO_ARGUMENTS = {"devices"}


def concrete(rest):
    """Whether a command (what follows the program) runs as written."""
    if PLACEHOLDER.search(rest):
        return False
    words = rest.split()
    if not words:
        return False
    # A file it reads or writes (a path or a name with an extension): flag
    # values alone ("--precision bf16") make a fragment, not a command.
    files = [w for w in words[1:] if not w.startswith("-") and re.search(r"/|\.\w+$", w)]
    return words[0] in NO_ARGUMENTS or bool(files)


def run_concrete(files, root, done):
    """Runs the concrete commands of `files` in order (not those in `done`);
    the number that failed."""
    failed = 0
    for path in files:
        for n, program, rest, text in commands(path):
            cmd = re.sub(r"^\$\s+", "", text)
            if cmd in done or not concrete(rest):
                continue
            done.add(cmd)
            failed += run_one(path, n, cmd, root)
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="directory of xlnetc, xlnetc-run, xlnet-opt")
    ap.add_argument("--list", action="store_true", help="print every command checked")
    ap.add_argument("--run", metavar="FILE", help="run the commands of a block of FILE")
    ap.add_argument("--section", help="with --run: the heading above the block")
    ap.add_argument("--root", help="with --run: where to run them (a repository layout)")
    ap.add_argument("--run-concrete", action="store_true",
                    help="run the concrete commands of the docs given (needs --root)")
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args()
    files = []
    for p in args.paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".md"))
        else:
            files.append(p)
    if args.run or args.run_concrete:
        if not args.root or (args.run and not args.section):
            ap.error("--run needs --section and --root; --run-concrete needs --root")
        failed, done = run_block(args.run, args.section, args.root) if args.run else (0, set())
        if args.run_concrete:
            failed += run_concrete(files, args.root, done)
        print(f"{failed} documented command{'' if failed == 1 else 's'} failed")
        return 1 if failed else 0
    if not files:
        ap.error("nothing to check: give docs, or --run")
    help_ = Help(args.bin)
    checked = problems = 0
    for path in files:
        for entry in commands(path):
            checked += 1
            problem = check(entry, help_)
            if args.list:
                print(f"{path}:{entry[0]}: {entry[3]}")
            if problem:
                problems += 1
                print(f"{path}:{entry[0]}: `{entry[3]}`: {problem}")
    print(f"{checked} documented commands checked in {len(files)} files, {problems} "
          f"problem{'' if problems == 1 else 's'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
