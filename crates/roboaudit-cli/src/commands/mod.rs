//! One module per top-level subcommand.

pub mod data;
pub mod memory;
pub mod pending;
pub mod retrieval;
pub mod testbed;
