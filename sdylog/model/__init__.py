"""Shardy's sharding concepts as plain dataclasses, with exact MLIR round trips."""
from sdylog.model.axis import AxisRef, SubAxis
from sdylog.model.mesh import Mesh, MeshAxis
from sdylog.model.rule import FactorKind, OpShardingRule
from sdylog.model.sharding import DimSharding, TensorSharding, sharding_per_value

__all__ = ["AxisRef", "SubAxis", "Mesh", "MeshAxis", "DimSharding", "TensorSharding",
           "sharding_per_value", "OpShardingRule", "FactorKind"]
