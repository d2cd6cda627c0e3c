"""A relation's documentation is the comment above its .decl, found in the
file the program read whatever the current folder (a cached program's
locations are relative to the folder another process loaded it from)."""
from sdylog.datalog import load_program
from sdylog.datalog.docs import relation_docs


def test_docs_are_found_from_another_folder(tmp_path, monkeypatch):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "p.dl").write_text("// Edges of the graph.\n.decl edge(x: number, y: number)\n")
    monkeypatch.chdir(tmp_path)
    program = load_program(str(tmp_path / "rules" / "p.dl"))
    assert program.relations["edge"].loc.file == "rules/p.dl"
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    doc = relation_docs(program)["edge"]
    assert (doc.doc, doc.where, doc.kind) == ("Edges of the graph.", "p.dl:2", "derived")
