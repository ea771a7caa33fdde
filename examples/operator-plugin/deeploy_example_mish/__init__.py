"""An operator plugin: ONNX ``Mish`` (y = x * tanh(softplus(x))) in float32 for generic-c and pulp-cluster."""
