"""The .gitignore matcher and glob translation."""

from __future__ import annotations

import pytest

from baton.tools.gitignore import IgnoreFile, is_ignored, parse_gitignore
from baton.tools.globs import PathGlob, glob_regex


def ignored(rules: str, path: str, is_dir: bool = False) -> bool:
    return is_ignored([IgnoreFile(tuple(parse_gitignore(rules)))], path, is_dir)


@pytest.mark.parametrize(
    ("rules", "path", "is_dir", "expected"),
    [
        ("*.log", "a.log", False, True),
        ("*.log", "deep/dir/a.log", False, True),
        ("*.log\n!keep.log", "keep.log", False, False),
        ("*.log\n!keep.log", "x/keep.log", False, False),
        ("build/", "build", True, True),
        ("build/", "build", False, False),
        ("build/", "src/build", True, True),
        ("/top.txt", "top.txt", False, True),
        ("/top.txt", "sub/top.txt", False, False),
        ("doc/frotz", "doc/frotz", False, True),
        ("doc/frotz", "a/doc/frotz", False, False),
        ("**/foo", "a/b/foo", False, True),
        ("**/foo", "foo", False, True),
        ("a/**/b", "a/b", False, True),
        ("a/**/b", "a/x/y/b", False, True),
        ("abc/**", "abc/x/y", False, True),
        ("abc/**", "abc", True, False),
        ("# comment\n\n", "# comment", False, False),
        ("\\#hash", "#hash", False, True),
        ("\\!bang", "!bang", False, True),
        ("trailing   ", "trailing", False, True),
        ("file?.txt", "file1.txt", False, True),
        ("file[0-9].txt", "filea.txt", False, False),
        ("*.txt\n!*.txt\n*.txt", "x.txt", False, True),
    ],
)
def test_rules(rules: str, path: str, is_dir: bool, expected: bool) -> None:
    assert ignored(rules, path, is_dir) is expected


def test_nested_file_applies_below_its_directory_only() -> None:
    files = [IgnoreFile(tuple(parse_gitignore("*.tmp"))), IgnoreFile(tuple(parse_gitignore("!x.tmp")), base="sub")]
    assert is_ignored(files, "x.tmp", False) is True
    assert is_ignored(files, "sub/x.tmp", False) is False


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "a.py", True),
        ("*.py", "a/b.py", False),
        ("**/*.py", "a/b/c.py", True),
        ("src/**/*.ts", "src/x.ts", True),
        ("src/**/*.ts", "src/a/b/x.ts", True),
        ("src/**/*.ts", "lib/x.ts", False),
        ("*.{ts,tsx}", "a.tsx", True),
        ("[!a]b", "ab", False),
        ("a[[]b", "a[b", True),
    ],
)
def test_glob_regex(pattern: str, path: str, expected: bool) -> None:
    assert bool(glob_regex(pattern).match(path)) is expected


def test_path_glob_by_name_or_path() -> None:
    assert PathGlob("*.py").matches("deep/dir/x.py")
    assert not PathGlob("src/*.py").matches("other/src/x.py")
    assert PathGlob("!*.py").matches("x.txt")
