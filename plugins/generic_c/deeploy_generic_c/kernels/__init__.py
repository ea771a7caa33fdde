"""The C builders of the generic C platform: functions that write a layer's C text from its constant shapes.

The op parsers in :mod:`deeploy_generic_c.ops` decide *whether* a kernel applies and read the layer's operands;
the modules here write *what* C the layer runs.  They are kept apart so that a kernel shared by several operator
families (the integer dot-product block behind Conv, MatMul and Gemm; the strided loops behind every
data-movement op) has one public home instead of being imported from another family's private helper.
Each module holds one kind of loop or kernel; none of them reads an ONNX node.
"""
