"""No link or path in the repository's Markdown leaves the repository (no web addresses, no
paths above it): a clone is all a reader has. Relative links must name files that exist."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")


def markdown_files() -> list[Path]:
    tracked = subprocess.run(
        ["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / name for name in tracked if "node_modules" not in name]


def test_markdown_links_stay_inside_the_repository() -> None:
    files = markdown_files()
    assert len(files) > 5  # the checker sees the docs
    bad = []
    for path in files:
        text = path.read_text()
        for target in LINK.findall(text):
            if target.startswith("#"):
                continue  # an anchor on the same page
            if re.match(r"[a-z]+:", target):
                bad.append(f"{path.relative_to(ROOT)}: {target} is outside the repository")
                continue
            resolved = (path.parent / target.split("#")[0]).resolve()
            if not resolved.is_relative_to(ROOT):
                bad.append(f"{path.relative_to(ROOT)}: {target} leaves the repository")
            elif not resolved.exists():
                bad.append(f"{path.relative_to(ROOT)}: {target} does not exist")
        if "shared/rules" in text:
            bad.append(f"{path.relative_to(ROOT)}: names shared/rules, which is not in a clone")
    assert bad == []


def test_rule_citations_name_the_rules_reference_in_the_repository() -> None:
    # The rule book (RULES.md) is not in a clone: docs/rules.md, numbered as it, is what a
    # reader can open.
    tracked = subprocess.run(
        ["git", "ls-files", "*.md", "*.py", "*.proto", "*.js", "*.toml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    citing = [
        name
        for name in tracked
        if name != "tests/test_docs_links.py"
        and "RULES" + ".md" in (ROOT / name).read_text(errors="replace")
    ]
    assert citing == []


#: A section of a guide named in code: docs/NAME.md, "Title" (or 'Title', or no comma).
SECTION = re.compile(r"docs/([a-z_-]+\.md),? [\"']([^\"'\n]+)[\"']")
HEADING = re.compile(r"^#+ (.+?)\s*$", re.MULTILINE)


def test_the_sections_code_and_messages_name_are_headings_of_their_guides() -> None:
    # Comments, protos and error messages pointed readers to sections that no longer had
    # those titles ("Features", "End", "Schema decisions", "Records").
    tracked = subprocess.run(
        ["git", "ls-files", "*.py", "*.js", "*.proto"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    named = 0
    bad = []
    for name in tracked:
        if "node_modules" in name:
            continue
        for guide, title in SECTION.findall((ROOT / name).read_text()):
            named += 1
            doc = ROOT / "docs" / guide
            headings = set(HEADING.findall(doc.read_text())) if doc.exists() else set()
            if title not in headings:
                bad.append(f"{name}: docs/{guide} has no section {title!r}")
    assert named > 10  # the checker sees the references
    assert bad == []
