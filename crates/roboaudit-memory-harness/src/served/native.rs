//! Native memory of a served policy that declares `memory_get` and `memory_set`: the memory is
//! the server's named float32 components (see the parent module).

use roboaudit_policy_client::client::extension_names;

use super::{PROTECTED_KEY, Wire};
use crate::error::HarnessError;
use crate::policy::{ActionChunk, Component, ComponentSpec, MemorySpec, MemoryState, Observation};

/// The spec read at connection, and a reset owed to the server.
pub(super) struct NativeMemory {
    pub(super) spec: MemorySpec,
    /// [`crate::MemoryPolicy::reset`] cannot fail, so the `reset` command is sent before the
    /// next operation that talks to the server.
    pub(super) reset_pending: bool,
    /// Observations folded since the last reset (for error messages).
    folded: usize,
}

type Raw = Vec<(String, Vec<f32>)>;

impl NativeMemory {
    /// Resets the server and reads its memory once, for the spec.
    pub(super) fn connect(
        name: &str,
        client: &mut roboaudit_policy_client::PolicyClient,
    ) -> Result<NativeMemory, HarnessError> {
        client.reset("memory audit (reset at connection)")?;
        let raw = client.memory_get("memory audit (memory spec at connection)")?;
        if raw.is_empty() {
            return Err(HarnessError::Policy {
                policy: name.to_owned(),
                message: "memory_get answered no memory component; a server that declares memory_get and memory_set must name its components".into(),
            });
        }
        let protected = extension_names(client.metadata(), PROTECTED_KEY);
        let spec = MemorySpec {
            components: raw
                .iter()
                .map(|(n, v)| ComponentSpec {
                    name: n.clone(),
                    shape: vec![v.len()],
                    protected: protected.contains(n),
                })
                .collect(),
        };
        Ok(NativeMemory {
            spec,
            reset_pending: false,
            folded: 0,
        })
    }

    fn settle(&mut self, wire: &mut Wire) -> Result<(), HarnessError> {
        if self.reset_pending {
            wire.client.reset("memory audit (reset before a history)")?;
            self.reset_pending = false;
            self.folded = 0;
        }
        Ok(())
    }

    /// The server's components in spec order, checked against the spec.
    fn get(&self, wire: &mut Wire) -> Result<Raw, HarnessError> {
        let mut raw = wire.client.memory_get("memory audit (memory_get)")?;
        if raw.len() != self.spec.components.len() {
            return Err(wire.contract(&format!(
                "memory_get answered {} components; the server declared {} at connection",
                raw.len(),
                self.spec.components.len()
            )));
        }
        let mut out = Vec::with_capacity(raw.len());
        for c in &self.spec.components {
            let k = raw.iter().position(|(n, _)| *n == c.name).ok_or_else(|| {
                wire.contract(&format!(
                    "memory_get answered no component `{}`, declared at connection",
                    c.name
                ))
            })?;
            let (n, v) = raw.swap_remove(k);
            if v.len() != c.shape[0] {
                return Err(wire.contract(&format!(
                    "memory component `{n}` has {} values; {} at connection",
                    v.len(),
                    c.shape[0]
                )));
            }
            out.push((n, v));
        }
        Ok(out)
    }

    pub(super) fn observe(
        &mut self,
        wire: &mut Wire,
        obs: &Observation,
    ) -> Result<(), HarnessError> {
        self.settle(wire)?;
        let generation = wire.client.generation();
        wire.fold(obs, self.folded)?;
        self.folded += 1;
        if wire.client.generation() != generation {
            return Err(wire.contract(&format!(
                "the connection was replaced while history observation {} was folded, so the server's memory is unknown (a native memory is not replayed); rerun to resume",
                self.folded - 1
            )));
        }
        Ok(())
    }

    /// Queries the present between a `memory_get` and a `memory_set` of the same memory; a
    /// query across a reconnection is asked again once from the restored memory.
    pub(super) fn query(
        &mut self,
        wire: &mut Wire,
        present: &Observation,
        seed: u64,
    ) -> Result<ActionChunk, HarnessError> {
        self.settle(wire)?;
        let saved = self.get(wire)?;
        wire.ask_on_one_connection(|wire| {
            let generation = wire.client.generation();
            let chunk = wire.ask(present, seed)?;
            let asked_on = wire.client.generation();
            wire.client
                .memory_set(&saved, "memory audit (memory_set after a present)")?;
            Ok((chunk, asked_on == generation))
        })
    }

    pub(super) fn memory(&mut self, wire: &mut Wire) -> Result<MemoryState, HarnessError> {
        self.settle(wire)?;
        let raw = self.get(wire)?;
        Ok(MemoryState {
            components: raw
                .into_iter()
                .map(|(name, values)| Component {
                    filled: values.len(),
                    name,
                    values,
                })
                .collect(),
        })
    }

    pub(super) fn set_memory(
        &mut self,
        wire: &mut Wire,
        state: &MemoryState,
    ) -> Result<(), HarnessError> {
        let mut raw = Vec::with_capacity(self.spec.components.len());
        for c in &self.spec.components {
            let v = state.get(&c.name).ok_or_else(|| {
                wire.contract(&format!("the memory to set has no component `{}`", c.name))
            })?;
            if v.values.len() != c.shape[0] {
                return Err(wire.contract(&format!(
                    "the memory to set has {} values in `{}`; the server declared {}",
                    v.values.len(),
                    c.name,
                    c.shape[0]
                )));
            }
            raw.push((c.name.clone(), v.values.clone()));
        }
        if state.components.len() != raw.len() {
            return Err(
                wire.contract("the memory to set has components the server did not declare")
            );
        }
        self.settle(wire)?;
        wire.client.memory_set(&raw, "memory audit (memory_set)")?;
        Ok(())
    }
}
