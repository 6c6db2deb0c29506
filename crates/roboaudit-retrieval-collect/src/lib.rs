//! Retrieval audit on the testbed (seed 000 §II–V): experience libraries, Reuse by Replay, exhaustive execution into a run folder.
