"""What the op parsers of the generic C platform share, apart from C text (that is :mod:`deeploy_generic_c.kernels`).

Reading a layer: operand types and quantisation parameters, sliding-window geometry, the attributes of
Deeploy's integer dialect, Resize and Einsum plans; the mapper and template helpers every op table uses; and how
the movement ops' layers are cut into tiles.  Shared by several operator families, hence public modules here
rather than private helpers of one family.
"""
