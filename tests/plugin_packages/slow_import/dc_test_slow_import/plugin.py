"""Works, but takes a noticeable time to import, as a plugin with a heavy dependency would."""

import time

from deeploy_core import AllocatorExtension, hookimpl
from deeploy_core.allocation import FirstFitAllocator

IMPORT_SECONDS = 0.3
"""Short, so that the other tests sharing this venv stay fast; they run with the warning off."""

time.sleep(IMPORT_SECONDS)


@hookimpl
def register_allocators(register):
    register(AllocatorExtension(name="slow-first-fit", factory=FirstFitAllocator, description="loads slowly"))
