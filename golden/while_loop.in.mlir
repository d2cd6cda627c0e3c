// A while loop's carried values are data-flow edges: the operand, the body
// argument, the body's yielded value and the loop result share a sharding,
// so "x" from %a reaches all of them and the value after the loop.
sdy.mesh @mesh = <["x"=4]>

func.func @main(%a: tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<32x8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c10 = stablehlo.constant dense<10> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %x = %a) : tensor<i32>, tensor<32x8xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %c10 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %next = stablehlo.add %i, %c1 : tensor<i32>
      %y = stablehlo.tanh %x : tensor<32x8xf32>
      stablehlo.return %next, %y : tensor<i32>, tensor<32x8xf32>
    }
  %1 = stablehlo.negate %0#1 : tensor<32x8xf32>
  return %1 : tensor<32x8xf32>
}
