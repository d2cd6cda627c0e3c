"""plan.PlanCache: of the plans kept that fit the sizes now, the nearest serves."""
from sdylog.datalog.plan import PlanCache


def _planned(cache, key, sizes, name):
    """cache.get for `sizes` (relation -> tuples) that makes plan `name`
    when none kept fits; the plan it gives."""
    return cache.get(key, sizes.get, lambda size: (size("a"), size("b"), name)[-1])


def test_the_nearest_plan_kept_serves_whatever_the_order_of_use():
    small, large = {"a": 300, "b": 200}, {"a": 2000, "b": 3000}
    for order in ((small, large), (large, small)):
        cache = PlanCache()
        for sizes in order:   # (each planned: none kept fits the other's sizes... until both are kept)
            _planned(cache, "k", sizes, "small" if sizes is small else "large")
        assert [p for _, p in cache.kept("k")] == ["large", "small"][::1 if order[0] is small else -1]
        # sizes both plans fit (within FACTOR of each): the one planned for the nearest serves
        big, little = {"a": 2000, "b": 1500}, {"a": 300, "b": 400}
        assert all(all(cache._fits(s[rel], r) for rel, r in ranges.items())
                   for ranges, _ in cache.kept("k") for s in (big, little))
        assert _planned(cache, "k", big, "new") == "large"
        assert _planned(cache, "k", little, "new") == "small"
        assert _planned(cache, "k", big, "new") == "large"
        assert len(cache.kept("k")) == 2 and cache.added == 2


def test_distance_counts_sizes_below_floor_as_floor_and_skips_empty():
    cache = PlanCache()
    ranges = {"a": cache.bounds(10), "b": cache.bounds(0), "c": None, "d": cache.bounds(5000)}
    sizes = {"a": 50, "b": 0, "c": None, "d": 5000}.get
    assert cache.distance(ranges, sizes) == 0.0
    assert cache.distance(ranges, {"a": 512, "b": 0, "c": None, "d": 10000}.get) == 3.0 + 1.0
