#!/usr/bin/env python3
"""The hostile suite's fast tier (hostile_inputs.py --tier fast, what CI runs) keeps its coverage: every
group and every class of a sampled family has a case in it, a new case is in it unless tagged `slow`,
and it is a real cut of the full tier. Registers the cases as the suite does (nothing is executed)."""
import contextlib
import io
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hostile_inputs as h  # noqa: E402


def registered():
    """Every case, as hostile_inputs.py --list registers them (its own main, so that a register function
    added there is counted here too; its listing is discarded)."""
    h.CASES.clear()
    argv = sys.argv
    sys.argv = ["hostile_inputs.py", "--lobench", "lobench", "--driver", "driver", "--list"]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            h.main()
    finally:
        sys.argv = argv
    return list(h.CASES)


class FastTier(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cases = registered()
        cls.full = [(c["group"], c["name"]) for c in cases]
        cls.fast = [(c["group"], c["name"]) for c in h.fast_tier(cases)]

    def test_every_group_has_a_case_in_the_fast_tier(self):
        self.assertEqual({g for g, _ in self.full}, {g for g, _ in self.fast})

    def test_every_class_of_a_sampled_family_has_a_case_in_the_fast_tier(self):
        classes = {h.family_of(n) for _, n in self.full} - {None}
        fast = {h.family_of(n) for _, n in self.fast} - {None}
        self.assertEqual(classes, fast)
        used = {key[0] for key in classes}
        self.assertEqual(used, set(range(len(h.FULL_TIER_FAMILIES))), "a family that samples no case: remove it")

    def test_every_case_outside_the_families_is_in_the_fast_tier(self):
        outside = [n for _, n in self.full if h.family_of(n) is None]
        self.assertLessEqual(set(outside), {n for _, n in self.fast})

    def test_the_fast_tier_keeps_the_order_and_cuts_the_suite(self):
        names = [n for _, n in self.full]
        positions = [names.index(n) for _, n in self.fast]
        self.assertEqual(positions, sorted(positions))
        self.assertLess(len(self.fast), 0.6 * len(self.full))

    def test_a_new_case_is_fast_unless_tagged_slow(self):
        cases = [dict(name="check a kind of input no one has tried", group="check-h5", tags=set()),
                 dict(name="check an expensive kind of input", group="check-h5", tags={"slow"})]
        self.assertEqual([c["name"] for c in h.fast_tier(cases)], ["check a kind of input no one has tried"])

    def test_a_group_of_slow_cases_only_keeps_its_first(self):
        cases = [dict(name=f"new group case {i}", group="new-group", tags={"slow"}) for i in range(3)]
        self.assertEqual([c["name"] for c in h.fast_tier(cases)], ["new group case 0"])


if __name__ == "__main__":
    unittest.main()
