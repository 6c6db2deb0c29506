//! FQE ground truth on the testbed (SPEC §3): push-suite datasets from behaviour-policy mixtures, target policies, their rollouts and policy-action files.
