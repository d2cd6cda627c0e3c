"""gc_paused: no cyclic collection inside, survivors promoted on request."""
import gc

from sdylog.datalog.gc_pause import gc_paused


def test_nested_pauses_restore_only_at_the_outermost():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused(promote_survivors=True):
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_survivors_go_to_the_oldest_generation():
    with gc_paused(promote_survivors=True):
        kept = [[i] for i in range(10)]   # lists: tracked by the collector
    young = {id(o) for o in gc.get_objects(generation=0)}
    old = {id(o) for o in gc.get_objects(generation=2)}
    assert id(kept[0]) not in young and id(kept[0]) in old


def test_the_collector_comes_back_after_an_error():
    try:
        with gc_paused():
            raise ValueError
    except ValueError:
        pass
    assert gc.isenabled()
