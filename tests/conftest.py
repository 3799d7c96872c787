"""The suite's root: tests/<area>/ hold the tests, each area's conftest.py its fixtures."""
from mindport.cpu_kernels import cap_this_process

cap_this_process()  # as the mindport command does: MindSpore's convolutions on the fast oneDNN path
