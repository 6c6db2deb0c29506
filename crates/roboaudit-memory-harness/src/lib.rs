//! Counterfactual memory audit harness (SPEC §2, seed 002 §IV): memory-policy interface, calibrators, bank policy, crossed histories on the testbed, controls and interventions.
