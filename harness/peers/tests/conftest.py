import os
import sys

# The peers' modules import each other by name (they run as scripts from harness/peers/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
