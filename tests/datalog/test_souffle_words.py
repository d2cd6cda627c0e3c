"""The Soufflé backend refuses, with a located error, numbers wider than the
installed Soufflé's words (no souffle needed: the check reads the program)."""
from sdylog.datalog.program import parse_program
from sdylog.datalog.souffle_engine import wide_number, word_bits


def test_word_size_from_version_text():
    assert word_bits("Version: 2.5\nWord size: 64 bits\n") == 64
    assert word_bits("Version: 2.5\nWord size: 32 bits\n") == 32


def test_first_wide_literal_is_found_with_its_location():
    program = parse_program(".decl a(x: number)\na(1).\n.decl b(x: number)\n"
                                 "b(y) :- a(x), y = x * 274877906944.\n", "p.dl")
    wide = wide_number(program, 32)
    assert wide.value == 274877906944 and wide.loc.line == 4
    assert wide_number(program, 64) is None
