// FLAGS: -sdy-propagation-pipeline
// KNOWN DIFFERENCE: sdylog gives chlo ops the rule of their XLA rewrite (sdylog/oprules/registry.py, _CHLO_POINTWISE; commit 0d38440); Shardy has none
// Review r33 F9 minimized: jax.random.normal's chlo.erf_inv. Shardy's registry has
// no rule for chlo ops: it propagates nothing through the op, so %arg0 stays
// unsharded while the op's result takes "data" from its use, and
// -sdy-insert-explicit-reshards (full version) puts no reshard between them: a
// local erf_inv of a 16x8 operand cannot give a 4x8 shard (Shardy's bug on chlo
// input). In a JAX compilation XLA legalizes chlo.erf_inv into element-wise
// StableHLO before Shardy runs; sdylog propagates as on that rewrite, %arg0 gets
// [{"data"}, {}]. With stablehlo.sine in place of the erf_inv both agree 3/3,
// also with the full reshards (compare_shardings, compare_collectives).
module {
  sdy.mesh @mesh = <["data"=4]>
  func.func @main(%arg0: tensor<16x8xf32>) -> tensor<16x8xf32> {
    %0 = chlo.erf_inv %arg0 : tensor<16x8xf32> -> tensor<16x8xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"data"}, {}]> : tensor<16x8xf32>
    return %1 : tensor<16x8xf32>
  }
}
