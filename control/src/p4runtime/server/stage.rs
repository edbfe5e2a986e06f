//! A config saved by VERIFY_AND_SAVE and the forwarding state written for it until COMMIT.
//!
//! The spec: VERIFY_AND_SAVE does not touch the forwarding state, and the Read and Write
//! requests after it refer to the saved config; COMMIT realizes that config and updates the
//! forwarding state by replaying the writes made since the save. pisa keeps a switch of the
//! saved program beside the running one (no ports, no packets) with its own server-side
//! extras and digest configurations: writes after the save are checked and applied there
//! (each update gets its real answer at once), reads answer from it, and COMMIT starts the
//! running instances on the saved program with that state, which is what replaying the writes
//! onto the empty new program gives. Packets keep the old program and its state until COMMIT.
//! A VERIFY_AND_COMMIT or RECONCILE_AND_COMMIT drops what was saved.

use std::sync::Arc;

use pipeline::api::control_state::ControlState;
use pipeline::switch::Switch;
use tonic::Status;

use super::super::codec::P4Error;
use super::super::device::{self, Op, Query};
use super::super::proto::p4::v1 as p4v1;
use super::{on_switch, Pipeline, Service, UNTIL_ANSWERED};

fn poisoned<T>(_: T) -> Status {
    Status::internal("stage poisoned")
}

/// The saved config and the switch its writes go to.
pub(super) struct Stage {
    pub pipeline: Arc<Pipeline>,
    sw: Switch,
}

impl Service {
    /// Whether a config saved by VERIFY_AND_SAVE awaits COMMIT.
    pub(super) fn staged(&self) -> Result<bool, Status> {
        Ok(self
            .shared
            .stage
            .lock()
            .map_err(|_| Status::internal("stage poisoned"))?
            .is_some())
    }

    /// The program requests refer to: the saved one while one awaits COMMIT.
    pub(super) fn pipeline_for(&self, staged: bool) -> Result<Arc<Pipeline>, Status> {
        if staged {
            if let Some(s) = self
                .shared
                .stage
                .lock()
                .map_err(|_| Status::internal("stage poisoned"))?
                .as_ref()
            {
                return Ok(s.pipeline.clone());
            }
        }
        self.pipeline()
    }

    /// Keeps `p` as the saved config, with a switch of it (the running switch's
    /// configuration) and empty state; replaces any saved before.
    pub(super) async fn save(&self, p: Pipeline) -> Result<(), Status> {
        let cfg = on_switch(self.shared.handle.clone(), UNTIL_ANSWERED, |sw, _| {
            sw.config().clone()
        })
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| Status::unavailable("the switch has no running instance"))?;
        let prog = Arc::new(p.program.program.clone());
        let sw = tokio::task::block_in_place(|| {
            p4::compile::on_big_stack(move || Switch::new(prog, cfg))
        })
        .map_err(|e| Status::invalid_argument(format!("cannot build the switch: {e}")))?;
        self.drop_stage()?;
        *self
            .shared
            .stage
            .lock()
            .map_err(|_| Status::internal("stage poisoned"))? = Some(Stage {
            pipeline: Arc::new(p),
            sw,
        });
        Ok(())
    }

    /// Forgets the saved config and what was written for it.
    pub(super) fn drop_stage(&self) -> Result<(), Status> {
        *self.shared.stage.lock().map_err(poisoned)? = None;
        *self.shared.stage_extras.lock().map_err(poisoned)? = Default::default();
        self.shared.stage_digests.lock().map_err(poisoned)?.clear();
        Ok(())
    }

    /// Applies `ops` to the saved config's switch (`atomic`: all or none), as
    /// [`Service::apply_ops`] does on the running one.
    pub(super) fn apply_staged(
        &self,
        ops: &[Op],
        atomic: bool,
    ) -> Result<Vec<Result<(), P4Error>>, Status> {
        let mut stage = self
            .shared
            .stage
            .lock()
            .map_err(|_| Status::internal("stage poisoned"))?;
        let s = stage.as_mut().ok_or_else(|| {
            Status::aborted("the saved config was committed or replaced during this write")
        })?;
        let before = atomic.then(|| s.sw.control_state());
        let results: Vec<_> = ops.iter().map(|op| device::apply(&mut s.sw, op)).collect();
        if let Some(before) = before.filter(|_| results.iter().any(|r| r.is_err())) {
            s.sw.restore_control_state(before);
        }
        Ok(results)
    }

    /// Answers `queries` from the saved config's switch.
    pub(super) fn read_staged(
        &self,
        queries: &[Query],
        now: u64,
    ) -> Result<Vec<p4v1::Entity>, Status> {
        let stage = self
            .shared
            .stage
            .lock()
            .map_err(|_| Status::internal("stage poisoned"))?;
        let s = stage
            .as_ref()
            .ok_or_else(|| Status::aborted("the saved config was committed during this read"))?;
        let mut out = Vec::new();
        for q in queries {
            let all = dataplane::switch::ALL_PIPES;
            out.extend(
                device::read(&s.sw, all, &s.pipeline.schema, q, now).map_err(super::status)?,
            );
        }
        Ok(out)
    }

    /// COMMIT: takes the saved config, the control state written for it (what replaying the
    /// writes since the save onto the empty program gives), and the server-side extras and
    /// digest configurations written with them, for the caller to install once the running
    /// instances have the new program.
    pub(super) fn take_stage(&self) -> Result<Committed, Status> {
        let s = self
            .shared
            .stage
            .lock()
            .map_err(poisoned)?
            .take()
            .ok_or_else(|| {
                Status::failed_precondition("COMMIT without a config saved by VERIFY_AND_SAVE")
            })?;
        let extras = std::mem::take(&mut *self.shared.stage_extras.lock().map_err(poisoned)?);
        let digests = std::mem::take(&mut *self.shared.stage_digests.lock().map_err(poisoned)?);
        Ok(Committed {
            state: Arc::new(std::sync::Mutex::new(s.sw.control_state())),
            pipeline: s.pipeline,
            extras,
            digests,
        })
    }
}

/// What COMMIT takes from the stage ([`Service::take_stage`]).
pub(super) struct Committed {
    pub pipeline: Arc<Pipeline>,
    /// Behind a mutex: it holds cells that are not `Sync`, and every instance takes a copy.
    pub state: Arc<std::sync::Mutex<ControlState>>,
    pub extras: super::extras::Extras,
    pub digests: std::collections::BTreeMap<u32, p4v1::digest_entry::Config>,
}
