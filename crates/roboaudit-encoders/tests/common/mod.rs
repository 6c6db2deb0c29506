//! Helpers shared by the integration tests (each test file uses a part of them).

#![allow(dead_code)]

pub mod reference;
