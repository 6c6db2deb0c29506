//! History-token memory of a served policy that declares `reset` but not `memory_get` /
//! `memory_set`: the harness keeps the history and replays it from a reset whenever the server
//! may not hold it (see the parent module).

use std::collections::HashMap;

use roboaudit_types::seed::Fnv1a;

use super::Wire;
use crate::error::HarnessError;
use crate::policy::{ActionChunk, Component, ComponentSpec, MemorySpec, MemoryState, Observation};

/// Name of the history-token component.
pub const HISTORY: &str = "history";

/// The history on the harness's side and what the server holds.
#[derive(Default)]
pub(super) struct TokenMemory {
    pub(super) history: Vec<Observation>,
    /// Every history a token was issued for, by hash (what `set_memory` can restore).
    known: HashMap<u64, Vec<Observation>>,
    /// The history the server's memory holds, by hash; `None` after a query that folded a
    /// present (or before the first reset).
    server: Option<u64>,
}

fn history_hash(obs: &[Observation]) -> u64 {
    let mut h = Fnv1a::new();
    h.write_u64(obs.len() as u64);
    for o in obs {
        let p = o.packet_bytes();
        h.write_u64(p.len() as u64).write(&p);
    }
    h.finish()
}

/// The token's declared spec: one unprotected component of 4 values.
pub(super) fn spec() -> MemorySpec {
    MemorySpec {
        components: vec![ComponentSpec {
            name: HISTORY.into(),
            shape: vec![4],
            protected: false,
        }],
    }
}

impl TokenMemory {
    /// Makes the server hold the current history: reset, then replay it. A replay during which
    /// the connection was replaced is redone once from a reset.
    fn sync(&mut self, wire: &mut Wire) -> Result<(), HarnessError> {
        let h = history_hash(&self.history);
        if self.server == Some(h) {
            return Ok(());
        }
        for _ in 0..2 {
            let generation = wire.client.generation();
            wire.client.reset("memory audit (reset before a history)")?;
            for (k, obs) in self.history.iter().enumerate() {
                wire.fold(obs, k)?;
            }
            if wire.client.generation() == generation {
                self.server = Some(h);
                return Ok(());
            }
        }
        Err(wire.contract(
            "the connection was replaced twice while the history was replayed; the server's memory is unknown",
        ))
    }

    pub(super) fn observe(
        &mut self,
        wire: &mut Wire,
        obs: &Observation,
    ) -> Result<(), HarnessError> {
        self.sync(wire)?;
        let generation = wire.client.generation();
        wire.fold(obs, self.history.len())?;
        self.history.push(obs.clone());
        if wire.client.generation() == generation {
            self.server = Some(history_hash(&self.history));
        } else {
            self.server = None;
            self.sync(wire)?;
        }
        Ok(())
    }

    pub(super) fn query(
        &mut self,
        wire: &mut Wire,
        present: &Observation,
        seed: u64,
    ) -> Result<ActionChunk, HarnessError> {
        wire.ask_on_one_connection(|wire| {
            self.sync(wire)?;
            let generation = wire.client.generation();
            let chunk = wire.ask(present, seed);
            // The present was folded (or the memory lost): the next query replays.
            self.server = None;
            let chunk = chunk?;
            Ok((chunk, wire.client.generation() == generation))
        })
    }

    /// The token of the current history (registered for [`TokenMemory::set_memory`]).
    pub(super) fn token(&mut self) -> MemoryState {
        let h = history_hash(&self.history);
        self.known.entry(h).or_insert_with(|| self.history.clone());
        MemoryState {
            components: vec![Component {
                name: HISTORY.into(),
                values: (0..4).map(|k| ((h >> (16 * k)) & 0xffff) as f32).collect(),
                filled: 4,
            }],
        }
    }

    pub(super) fn set_memory(
        &mut self,
        wire: &Wire,
        state: &MemoryState,
    ) -> Result<(), HarnessError> {
        let c = state
            .get(HISTORY)
            .filter(|c| c.values.len() == 4)
            .ok_or_else(|| {
                wire.contract("a served policy's memory is a `history` token of 4 values")
            })?;
        let mut h = 0u64;
        for (k, v) in c.values.iter().enumerate() {
            if !(v.is_finite() && *v >= 0.0 && *v < 65536.0 && v.fract() == 0.0) {
                return Err(
                    wire.contract("the history token holds a value that is not a 16-bit integer")
                );
            }
            h |= (*v as u64) << (16 * k);
        }
        let history = self.known.get(&h).cloned().ok_or_else(|| {
            wire.contract("the history token names no history this policy has seen (a served policy's memory can only be set to one it produced)")
        })?;
        self.history = history;
        Ok(())
    }
}
