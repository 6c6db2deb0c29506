"""Meta-World bridge for roboaudit: drives Meta-World's own tasks and scripted experts and writes
the files `roboaudit fqe fit/evaluate` and `roboaudit retrieval audit` read (SPEC.md §1, §3).

Modules: `rng` (seeded draws), `envs` (environment, placement, rendering, state), `behaviour`
(expert, noisy targets, behaviour mixture), `lerobot` (LeRobot v3.0 writer), `fqe` (dataset, policy
actions, ground truth), `retrieval` (library, query scenes, replay with retargeting, run folder).
"""

__version__ = "0.1.0"
