#!/usr/bin/env python3
"""The hostile suite's fast tier (hostile_inputs.py --tier fast, what CI runs) keeps its coverage: every
group and every class of a sampled family has a case in it, a new case is in it unless tagged `slow`,
and it is a real cut of the full tier. Runs on the registered cases only (nothing is executed)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_inputs as h  # noqa: E402


def registered():
    h.CASES.clear()
    h.register_all("lobench")  # the executable is only used by the cases' setups, which do not run here
    return list(h.CASES)


class FastTier(unittest.TestCase):
    def setUp(self):
        self.full = registered()
        self.fast = h.fast_tier(self.full)

    def test_every_group_has_a_case_in_the_fast_tier(self):
        self.assertEqual({c["group"] for c in self.full}, {c["group"] for c in self.fast})

    def test_every_class_of_a_sampled_family_has_a_case_in_the_fast_tier(self):
        classes = {h.family_of(c["name"]) for c in self.full} - {None}
        fast = {h.family_of(c["name"]) for c in self.fast} - {None}
        self.assertEqual(classes, fast)
        used = {key[0] for key in classes}
        self.assertEqual(used, set(range(len(h.FULL_TIER_FAMILIES))), "a family that samples no case: remove it")

    def test_the_fast_tier_keeps_the_order_and_cuts_the_suite(self):
        names = [c["name"] for c in self.full]
        positions = [names.index(c["name"]) for c in self.fast]
        self.assertEqual(positions, sorted(positions))
        self.assertLess(len(self.fast), 0.6 * len(self.full))

    def test_a_new_case_is_fast_unless_tagged_slow(self):
        h.case("check a kind of input no one has tried", "check-h5", ["x"], ["check"])
        h.case("check an expensive kind of input", "check-h5", ["x"], ["check"], tags=("slow",))
        fast = {c["name"] for c in h.fast_tier(list(h.CASES))}
        self.assertIn("check a kind of input no one has tried", fast)
        self.assertNotIn("check an expensive kind of input", fast)

    def test_a_group_of_slow_cases_only_keeps_its_first(self):
        cases = [dict(name=f"new group case {i}", group="new-group", tags={"slow"}) for i in range(3)]
        self.assertEqual([c["name"] for c in h.fast_tier(cases)], ["new group case 0"])


if __name__ == "__main__":
    unittest.main()
