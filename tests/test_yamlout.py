"""schedgen's YAML writer: read back by PyYAML (YAML 1.1, as kubectl reads it) exactly."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from schedgen.render import yamlout
from tests.budget import examples

# What YAML 1.1 would read as something other than a string, if written plain.
TRICKY = ["yes", "No", "ON", "off", "y", "n", "null", "~", "true", "1", "0o17", "0x1f", "1e3",
          "1_000", "12:30", "2026-12-01", ".inf", "-.5", "=", "<<", "- a", "a: b", "#x", "*a",
          "&a", "!a", "%a", "@a", "`a", "'a'", '"a"', "{a}", "[a]", "a #b", " a", "a ", "",
          "line\nbreak", "tab\there", "\u2028", "\x85", "\x7f", "\ufeff", "é", "😀", "\\"]

scalars = st.one_of(st.text(), st.sampled_from(TRICKY), st.integers(-10**12, 10**12),
                    st.booleans())
trees = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.one_of(st.text(), st.sampled_from(TRICKY)),
                                            inner, max_size=4)),
    max_leaves=20)


@settings(max_examples=examples(300))
@given(st.dictionaries(st.one_of(st.text(), st.sampled_from(TRICKY)), trees, max_size=5))
def test_what_is_written_is_read_back_unchanged(data: dict) -> None:
    assert yaml.safe_load(yamlout.dump(data)) == (data or None)


def test_tricky_strings_are_quoted_and_plain_words_are_not() -> None:
    for s in TRICKY:
        assert yaml.safe_load(f"k: {yamlout.scalar(s)}") == {"k": s}, s
    assert yamlout.scalar("batch/v1") == "batch/v1"
    assert yamlout.scalar("app.kubernetes.io/managed-by") == "app.kubernetes.io/managed-by"
    assert yamlout.scalar("yes") == '"yes"'
    assert yamlout.scalar("15 6 * * *") == '"15 6 * * *"'


def test_the_layout_is_block_style() -> None:
    text = yamlout.dump({"a": {"b": [{"name": "x", "v": 1}, "s"], "e": [], "f": {}}})
    assert text == "a:\n  b:\n    - name: x\n      v: 1\n    - s\n  e: []\n  f: {}\n"
