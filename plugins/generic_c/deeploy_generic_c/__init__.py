"""The generic C platform: float32 (and later integer) kernels in portable C99."""
