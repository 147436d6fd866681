import os
import sys

# The figure scripts import their siblings (lobench_results) as top-level modules.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
