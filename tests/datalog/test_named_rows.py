"""Rows by column name: select / named / read_columns / row_matrix / Lookup."""
import pytest

from sdylog.datalog import make_engine, parse_program
from sdylog.datalog.named_rows import row_type
from sdylog.ir.diagnostics import SdylogError

PROGRAM = parse_program("""
.decl edge(src: number, dst: number, label: symbol)
.input edge
.decl hop(src: number, dst: number, label: symbol)
hop(x, z, l) :- edge(x, y, l), edge(y, z, _).
""", "named.dl")
EDGES = [(1, 2, "a"), (2, 3, "b"), (3, 1, "c")]


@pytest.fixture
def engine():
    with make_engine(PROGRAM, "memory") as e:
        e.load("edge", EDGES)
        e.run()
        yield e


def test_select_names_columns_in_the_order_asked(engine):
    assert sorted(engine.select("hop", "src", "dst", "label")) == [(1, 3, "a"), (2, 1, "b"), (3, 2, "c")]
    assert sorted(engine.select("hop", "label", "src")) == [("a", 1), ("b", 2), ("c", 3)]
    assert sorted(engine.select("hop", "dst")) == [(1,), (2,), (3,)]


def test_ordered_sorts_whole_rows_as_read_does(engine):
    assert engine.select("hop", "label", ordered=True) == [(r[2],) for r in engine.read("hop")]


def test_named_rows_carry_the_declared_names(engine):
    rows = engine.named("hop", ordered=True)
    assert [r.label for r in rows] == ["a", "b", "c"]
    assert type(rows[0]) is row_type(engine.decl("hop")) and type(rows[0]).__name__ == "hop"
    assert rows == engine.read("hop")   # still tuples


def test_an_undeclared_column_is_an_error_naming_the_columns(engine):
    with pytest.raises(SdylogError, match="relation 'hop' has no column 'dest' .its columns: src, dst, label."):
        engine.select("hop", "src", "dest")
    with pytest.raises(SdylogError, match="name the columns"):
        engine.select("hop")


def test_positions_are_remembered_per_declaration():
    # (positions() keeps what _find_positions gives, per declaration object:
    # another declaration of the same relation, other columns, gets its own)
    from sdylog.datalog.named_rows import _find_positions, positions
    first = PROGRAM.relations["hop"]
    other = parse_program(".decl hop(label: symbol, src: number)", "other.dl").relations["hop"]
    for decl in (first, other, first):
        assert positions(decl, ("src", "label")) == _find_positions(decl, ("src", "label"))
    assert positions(first, ["src", "label"]) == (0, 2) and positions(other, ["src", "label"]) == (1, 0)


def test_read_columns_by_name(engine):
    cols = engine.read_columns("hop", "label", "src")
    assert list(cols) == ["label", "src"]
    assert cols["src"].tolist() == [1, 2, 3] and cols["label"].tolist() == ["a", "b", "c"]
    assert list(engine.read_columns("hop")) == ["src", "dst", "label"]


def test_row_matrix_by_name():
    with make_engine(PROGRAM, "memory") as e:
        e.load("edge", EDGES)
        e.run()
        held = e.row_matrix("hop", "dst", "src")
        if held is None:
            pytest.skip("hop is held in Python here")
        matrix, symbols = held
        assert sorted(map(tuple, matrix.tolist())) == [(1, 2), (2, 3), (3, 1)]   # (dst, src)
        whole, _ = e.row_matrix("hop")
        assert whole.shape == (3, 3)


def test_lookup_by_column_values(engine):
    from sdylog.datalog.named_rows import Lookup
    look = Lookup(engine)
    assert [r.dst for r in look.where("hop", label="b")] == [1]
    assert look.first("hop", src=3, dst=2).label == "c"
    assert look.first("hop", src=3, dst=1) is None
    assert look.exists("edge", dst=1) and not look.exists("edge", dst=4)
    with pytest.raises(SdylogError, match="relation 'hop' has no column 'to'"):
        look.where("hop", to=1)


def test_keyword_columns_get_a_trailing_underscore():
    program = parse_program(".decl span(from: number, to: number)\n.input span\n", "kw.dl")
    with make_engine(program, "memory") as e:
        e.load("span", [(1, 2)])
        e.run()
        (row,) = e.named("span")
        assert row.from_ == 1 and row.to == 2
        assert e.select("span", "to", "from") == [(2, 1)]



def test_lookup_without_columns_gives_every_row(engine):
    from sdylog.datalog.named_rows import Lookup
    assert [tuple(r) for r in Lookup(engine).where("edge")] == sorted(EDGES)
