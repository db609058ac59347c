"""Checks the hosted CI workflows (.github/workflows/*.yml), which cannot run here: each parses
as YAML, each job says where it runs and has steps, it uses only the actions named below, and
every command its steps run exists in the repository (a script) or in the toolchain (swift,
xcodebuild with a scheme this package defines). Run by scripts/check-workflows.sh in .ci/run."""
import glob
import os
import re
import shlex
import sys

import yaml

ALLOWED_ACTIONS = {"actions/checkout@v4"}
# Commands a step may run besides the repository's scripts, and shell words that are not commands.
TOOLS = {"swift", "xcodebuild"}
SHELL_WORDS = {"for", "do", "done", "if", "then", "fi", "else"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def package_names():
    """The library products and targets Package.swift declares (what -scheme and --product name)."""
    text = open(os.path.join(ROOT, "Package.swift"), encoding="utf-8").read()
    return set(re.findall(r'\.(?:library|executable|target|executableTarget)\(name: "([^"]+)"', text))


def check_command(line, loop_values, names, problems, where):
    for part in re.split(r"&&|\|\||;|\|", line):
        words = shlex.split(part.strip(), posix=True) if part.strip() else []
        if not words:
            continue
        if words[0] == "for":  # for NAME in A B C; the values are checked where they are used
            continue
        if words[0] in SHELL_WORDS:
            words = words[1:]
            if not words:
                continue
        command = words[0]
        if command in ("bash", "sh", "python3"):
            script = words[1] if len(words) > 1 else ""
            if not os.path.isfile(os.path.join(ROOT, script)):
                problems.append(f"{where}: runs {script or '(nothing)'}, which is not in the repository")
        elif command in TOOLS:
            for flag in ("-scheme", "--product"):
                if flag in words:
                    value = words[words.index(flag) + 1]
                    values = loop_values if value.startswith("$") else [value]
                    for name in values:
                        if name not in names:
                            problems.append(f"{where}: {flag} {name} is not a product or target of Package.swift")
        else:
            problems.append(f"{where}: runs {command}, which is neither a repository script nor {sorted(TOOLS)}")


def check(path, names):
    problems = []
    workflow = yaml.safe_load(open(path, encoding="utf-8"))
    if not isinstance(workflow, dict) or not workflow.get("jobs"):
        return [f"{path}: no jobs"]
    for job_name, job in workflow["jobs"].items():
        where = f"{os.path.basename(path)} › {job_name}"
        if "runs-on" not in job:
            problems.append(f"{where}: no runs-on")
        steps = job.get("steps") or []
        if not steps:
            problems.append(f"{where}: no steps")
        for step in steps:
            if "uses" in step and step["uses"] not in ALLOWED_ACTIONS:
                problems.append(f"{where}: uses {step['uses']}, not one of {sorted(ALLOWED_ACTIONS)}")
            run = step.get("run")
            if run is None:
                continue
            loop_values = []
            for line in run.splitlines():
                loop = re.match(r"\s*for \w+ in (.+?); do", line)
                if loop:
                    loop_values = shlex.split(loop.group(1))
                check_command(line.split("#")[0] if " #" in line else line, loop_values, names, problems, where)
    return problems


SELF_TEST = """
jobs:
  broken:
    runs-on: macos-15
    steps:
      - uses: someone/else@v1
      - run: bash scripts/no-such-script.sh
      - run: |
          for scheme in Tern NoSuchScheme; do
              xcodebuild build -scheme "$scheme"
          done
      - run: make everything
"""


def self_test(names):
    """The checker finds each kind of mistake in a workflow that has one of each."""
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as file:
        file.write(SELF_TEST)
    try:
        problems = check(file.name, names)
    finally:
        os.unlink(file.name)
    expected = ["uses someone/else@v1", "no-such-script.sh", "-scheme NoSuchScheme", "runs make"]
    missed = [text for text in expected if not any(text in problem for problem in problems)]
    if missed or len(problems) != len(expected):
        print(f"check-workflows: the self-test found {problems}, expected one of each of {expected}", file=sys.stderr)
        return False
    return True


def main():
    paths = sorted(glob.glob(os.path.join(ROOT, ".github/workflows/*.yml")))
    if not paths:
        print("check-workflows: no workflow in .github/workflows", file=sys.stderr)
        return 1
    names = package_names()
    if not self_test(names):
        return 1
    problems = [problem for path in paths for problem in check(path, names)]
    for problem in problems:
        print(f"check-workflows: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"check-workflows: {len(paths)} workflow(s), every command in the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())
