"""GSPMD sharding strings and the mesh that holds them (sdylog.model.gspmd).

The property tests check the mesh against GSPMD's own meaning: each device
holds, along each dimension, the tile its place in the tile assignment says
(the sdy side read through sdylog.partition.shards)."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdylog.model.gspmd import (Maximal, Replicated, Tiled, Unknown, UnreadableSharding, device_chunks, mesh_for,
                                parse_gspmd, to_sdy)
from sdylog.partition.shards import shard_index


@pytest.mark.parametrize("text,expected", [
    ("{replicated}", [Replicated()]),
    ("{unknown}", [Unknown()]),
    ("{maximal device=3}", [Maximal(3)]),
    ("{devices=[4,1,2]<=[8] last_tile_dim_replicate}", [Tiled((4, 1, 2), tuple(range(8)), ("replicated",))]),
    ("{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}",
     [Tiled((1, 2, 4), (0, 2, 4, 6, 1, 3, 5, 7), ("replicated",))]),
    ("{devices=[2,2]0,2,1,3}", [Tiled((2, 2), (0, 2, 1, 3), ())]),
    ("{devices=[2,1,2]<=[4] last_tile_dims={unreduced}}", [Tiled((2, 1, 2), (0, 1, 2, 3), ("unreduced",))]),
    ("{{replicated}, {maximal device=0}}", [Replicated(), Maximal(0)]),
])
def test_the_forms_jax_and_xla_write(text, expected):
    assert parse_gspmd(text) == expected


@pytest.mark.parametrize("text,form", [
    ("{manual}", "manual sharding"),
    ("{devices=[2,2]<=[4] last_tile_dims={manual}}", "'manual' subgroup"),
    ("{devices=[2,2]<=[4] shard_as 1}", "'shard_as'"),
    ("{devices=[2,2]0,1,2}", "3 device ids for 4 tiles"),
    ("{devices=[2,2]<=[8]}", "does not fit its tile dims"),
    ("{mesh[x=2], [{x}]}", "'mesh'"),
    ("replicated", "not a {...} sharding"),
])
def test_an_unreadable_form_is_named(text, form):
    with pytest.raises(UnreadableSharding) as e:
        parse_gspmd(text)
    assert form in e.value.form


def test_jax_mlp_shardings_share_the_data_model_mesh():
    data = parse_gspmd("{devices=[4,1,2]<=[8] last_tile_dim_replicate}")[0]    # P("data", None)
    model = parse_gspmd("{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}")[0]   # P(None, "model")
    both = parse_gspmd("{devices=[8,1]<=[4,2]T(1,0)}")[0]     # P(("model", "data"))
    gm, rejected = mesh_for([data, model, both])
    assert not rejected
    assert [(a.name, a.size) for a in gm.mesh.axes] == [("axis_0", 4), ("axis_1", 2)] and not gm.mesh.device_ids
    assert str(to_sdy(data, gm, "mesh", 2)) == '<@mesh, [{"axis_0"}, {}]>'
    assert str(to_sdy(model, gm, "mesh", 2)) == '<@mesh, [{}, {"axis_1"}]>'
    assert str(to_sdy(both, gm, "mesh", 2)) == '<@mesh, [{"axis_1", "axis_0"}, {}]>'
    assert str(to_sdy(Replicated(), gm, "mesh", 2, open_dims=frozenset({1}))) == '<@mesh, [{}, {?}]>'
    assert str(to_sdy(Maximal(5), gm, "mesh", 2)) == "<@maximal_mesh_5, []>"


def test_an_explicit_device_order_becomes_the_meshs():
    s = parse_gspmd("{devices=[2,2]3,1,0,2}")[0]
    gm, rejected = mesh_for([s])
    assert not rejected and gm.mesh.device_ids == (3, 1, 0, 2)
    _check_places(s, gm)


def test_tilings_that_do_not_nest_are_rejected():
    a = parse_gspmd("{devices=[2,3]<=[6]}")[0]
    b = parse_gspmd("{devices=[3,2]<=[6]}")[0]   # cuts the 6 devices at 2 where a cuts at 3
    gm, rejected = mesh_for([a, b])
    assert b in rejected and "does not nest" in rejected[b] and a not in rejected
    c = parse_gspmd("{devices=[2,2]<=[4]}")[0]
    assert "4 devices" in mesh_for([a, c])[1][c]


def test_device_chunks_refuse_what_is_no_transposition():
    assert device_chunks((0, 1, 2, 3)) is not None
    assert device_chunks((0, 2, 1, 3)) is not None
    assert device_chunks((1, 0, 3, 2)) is None
    assert device_chunks((0, 3, 1, 2)) is None


def _check_places(s: Tiled, gm) -> None:
    """Every device holds, along each dimension, the tile GSPMD puts it on."""
    sdy = to_sdy(s, gm, "mesh", s.rank)
    for pos, device in enumerate(s.devices):
        coords, rest = [], pos
        for t in reversed(s.tile_dims):
            rest, c = divmod(rest, t)
            coords.append(c)
        coords.reverse()
        for d in range(s.rank):
            assert shard_index(device, gm.mesh, sdy.dims[d].axes) == coords[d], (s, device, d)


@st.composite
def iota_tilings(draw, n_devices=None):
    """A tile assignment `devices=[...]<=[reshape]T(perm)` of random factors."""
    primes = draw(st.lists(st.sampled_from([2, 2, 2, 3]), min_size=1, max_size=5)) if n_devices is None \
        else n_devices
    n = math.prod(primes)
    reshape = _group(draw, primes)
    perm = draw(st.permutations(range(len(reshape))))
    shuffled = draw(st.permutations(primes))
    tiles = list(_group(draw, list(shuffled)))
    subgroups = ()
    if len(tiles) > 1 and draw(st.booleans()):
        subgroups = ("replicated",)
    text = (f"{{devices=[{','.join(map(str, tiles))}]<=[{','.join(map(str, reshape))}]"
            f"T({','.join(map(str, perm))}){' last_tile_dim_replicate' if subgroups else ''}}}")
    return parse_gspmd(text)[0], n


def _group(draw, factors) -> tuple[int, ...]:
    """The factors multiplied together in consecutive runs."""
    out, cur = [], 1
    for f in factors:
        cur *= f
        if draw(st.booleans()):
            out.append(cur)
            cur = 1
    if cur > 1 or not out:
        out.append(cur)
    return tuple(out)


@settings(max_examples=150, deadline=None)
@given(iota_tilings())
def test_every_device_holds_the_tile_gspmd_gives_it(case):
    s, _n = case
    gm, rejected = mesh_for([s])
    if s in rejected:   # a tiling whose dims and device digits share no factor (e.g. 3 across 2x2)
        assert "transposition" in rejected[s] or "nest" in rejected[s]
        return
    _check_places(s, gm)


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_several_shardings_on_one_mesh_keep_their_places(data):
    primes = data.draw(st.lists(st.sampled_from([2, 2, 3]), min_size=1, max_size=4))
    shardings = [data.draw(iota_tilings(primes))[0] for _ in range(3)]
    gm, rejected = mesh_for(shardings)
    for s in shardings:
        if s not in rejected:
            _check_places(s, gm)
