//! Any [`MemoryPolicy`] behind the in-process test server of `roboaudit-policy-client`, speaking
//! the wire mapping of the parent module: for tests that prove the served path gives the
//! built-in path's numbers, and for failure drills.
//!
//! A query acts on the packet under its seed (0 without one), then folds the packet into the
//! memory, as a deployed policy does. `memory_get` answers each component as a float32 array
//! plus its `filled` count as a one-value component `NAME/filled`, so a built-in policy's
//! memory crosses the wire exactly; `memory_set` takes the same map back.

use roboaudit_policy_client::server::{Answer, TestServer, actions_reply, metadata_with};
use roboaudit_policy_client::{Field, NdArray};

use super::{CANDIDATES_KEY, LAYOUT_KEY, PROTECTED_KEY};
use crate::policy::{ACTION_DIM, Component, FeatureLayout, MemoryPolicy, MemoryState, Observation};

/// Key of a control message's command.
const COMMAND_KEY: &str = "roboaudit/command";
/// Key of the memory map in `memory_get` answers and `memory_set` requests.
const MEMORY_KEY: &str = "roboaudit/memory";
/// Suffix of the `filled` count's component.
const FILLED: &str = "/filled";

fn ints(f: Option<&Field>, key: &str) -> Result<Vec<usize>, String> {
    match f {
        Some(Field::List(l)) => l
            .iter()
            .map(|x| match x.as_f64() {
                Some(v) if v >= 0.0 && v.fract() == 0.0 => Ok(v as usize),
                _ => Err(format!("`{key}` holds a value that is not a count")),
            })
            .collect(),
        _ => Err(format!("no list `{key}`")),
    }
}

/// The [`Observation`] a request carries (default keys), without its frame.
///
/// # Errors
/// A message naming the missing or malformed key.
pub fn observation_from_request(req: &Field) -> Result<Observation, String> {
    let features = match req.get("observation/state") {
        Some(Field::Array(a)) => a.to_f32()?,
        _ => return Err("no array `observation/state`".into()),
    };
    let l = ints(req.get(LAYOUT_KEY), LAYOUT_KEY)?;
    let [n_blocks, n_trays, n_pads] = l[..] else {
        return Err(format!("`{LAYOUT_KEY}` must hold 3 counts"));
    };
    Ok(Observation {
        features,
        layout: FeatureLayout {
            n_blocks,
            n_trays,
            n_pads,
        },
        frame: None,
        branch_candidates: ints(req.get(CANDIDATES_KEY), CANDIDATES_KEY)?,
    })
}

fn memory_map(state: &MemoryState) -> Field {
    let mut out = Vec::with_capacity(2 * state.components.len());
    for c in &state.components {
        out.push((
            c.name.clone(),
            Field::Array(NdArray::from_f32(vec![c.values.len()], &c.values)),
        ));
        out.push((
            format!("{}{FILLED}", c.name),
            Field::Array(NdArray::from_f32(vec![1], &[c.filled as f32])),
        ));
    }
    Field::Map(vec![(MEMORY_KEY.into(), Field::Map(out))])
}

fn state_of(req: &Field) -> Result<MemoryState, String> {
    let Some(Field::Map(m)) = req.get(MEMORY_KEY) else {
        return Err(format!("no map `{MEMORY_KEY}`"));
    };
    let array = |key: &str| match m.iter().find(|(n, _)| n == key) {
        Some((_, Field::Array(a))) => a.to_f32(),
        _ => Err(format!("no array `{key}`")),
    };
    let mut components = Vec::new();
    for (name, _) in m.iter().filter(|(n, _)| !n.ends_with(FILLED)) {
        let filled = array(&format!("{name}{FILLED}"))?;
        components.push(Component {
            name: name.clone(),
            values: array(name)?,
            filled: filled.first().map_or(0, |&f| f as usize),
        });
    }
    Ok(MemoryState { components })
}

/// One request → one answer.
fn answer<P: MemoryPolicy>(policy: &mut P, req: &Field) -> Result<Field, String> {
    match req.get(COMMAND_KEY).and_then(Field::as_text) {
        Some("reset") => {
            policy.reset();
            return Ok(Field::Map(vec![]));
        }
        Some("memory_get") => {
            return policy
                .memory()
                .map(|m| memory_map(&m))
                .map_err(|e| roboaudit_types::error_chain(&e));
        }
        Some("memory_set") => {
            let state = state_of(req)?;
            policy
                .set_memory(&state)
                .map_err(|e| roboaudit_types::error_chain(&e))?;
            return Ok(Field::Map(vec![]));
        }
        Some(other) => return Err(format!("unknown command `{other}`")),
        None => {}
    }
    let obs = observation_from_request(req)?;
    let seed = req
        .get("roboaudit/action_seed")
        .and_then(Field::as_f64)
        .unwrap_or(0.0) as u64;
    let chunk = policy
        .act(&obs, seed)
        .map_err(|e| roboaudit_types::error_chain(&e))?;
    policy
        .observe(&obs)
        .map_err(|e| roboaudit_types::error_chain(&e))?;
    Ok(actions_reply(chunk.len(), ACTION_DIM, &chunk.values))
}

/// Serves `policy` on `127.0.0.1:<free port>` declaring `capabilities` (and the components
/// its spec marks protected); a request it cannot answer gets the server-error report
/// (text frame, close 1011).
///
/// # Errors
/// I/O errors binding the port.
pub fn serve_policy<P: MemoryPolicy + Send + 'static>(
    mut policy: P,
    capabilities: &[&str],
) -> std::io::Result<TestServer> {
    let mut metadata = metadata_with(capabilities);
    let protected: Vec<Field> = policy
        .memory_spec()
        .components
        .iter()
        .filter(|c| c.protected)
        .map(|c| Field::Text(c.name.clone()))
        .collect();
    if let Field::Map(top) = &mut metadata
        && let Some((_, Field::Map(ext))) = top.iter_mut().find(|(k, _)| k == "roboaudit")
    {
        ext.push((PROTECTED_KEY.into(), Field::List(protected)));
    }
    TestServer::start(
        metadata,
        Box::new(move |req| match req.and_then(|r| answer(&mut policy, &r)) {
            Ok(reply) => Answer::Reply(reply),
            Err(e) => Answer::Error(e),
        }),
    )
}
