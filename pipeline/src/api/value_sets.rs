//! Parser value set verbs: entries (a value and a mask per field of the set's element type)
//! added, deleted, listed and cleared per pipe, as bf-rt's `<parser>.<value_set>` tables.

use super::{ApiError, PipeSel};
use crate::ir::Value;
use crate::phv::mask;
use crate::switch::Switch;

/// One value set entry on one pipe: per field, its value and mask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueSetEntry {
    pub pipe: u16,
    pub fields: Vec<(Value, Value)>,
}

impl Switch {
    fn value_set_ref(&self, name: &str) -> Result<(usize, usize), ApiError> {
        self.resolve_name("value set", name, |p| {
            p.value_sets.iter().map(|v| v.name.as_str())
        })
    }

    /// The set's fields: names and widths.
    pub fn value_set_fields(&self, name: &str) -> Result<Vec<(String, u16)>, ApiError> {
        let (pl, v) = self.value_set_ref(name)?;
        Ok(self.prog.pipelines[pl].value_sets[v].fields.clone())
    }

    /// Checks an entry's fields against the set (count, widths) and canonicalises it
    /// (value bits outside the mask cleared).
    fn value_set_entry(
        &self,
        pl: usize,
        v: usize,
        fields: &[(Value, Value)],
    ) -> Result<Vec<(Value, Value)>, ApiError> {
        let vs = &self.prog.pipelines[pl].value_sets[v];
        if fields.len() != vs.fields.len() {
            return Err(ApiError::ValueSetFields {
                set: vs.name.clone(),
                expected: vs.fields.len(),
                got: fields.len(),
            });
        }
        let mut out = Vec::with_capacity(fields.len());
        for ((value, m), (fname, w)) in fields.iter().zip(&vs.fields) {
            for x in [value, m] {
                if *x & !mask(*w) != 0 {
                    return Err(ApiError::ValueTooWide {
                        what: format!("value set {} field {fname}", vs.name),
                        value: *x,
                        width: *w,
                    });
                }
            }
            out.push((value & m, *m));
        }
        Ok(out)
    }

    /// Adds an entry (a value and mask per field) on every selected pipe.
    pub fn value_set_add(
        &mut self,
        pipes: PipeSel,
        name: &str,
        fields: &[(Value, Value)],
    ) -> Result<(), ApiError> {
        let (pl, v) = self.value_set_ref(name)?;
        let entry = self.value_set_entry(pl, v, fields)?;
        let vs = self.prog.pipelines[pl].value_sets[v].clone();
        let targets = self.target_pipes(pipes, pl, &vs.name)?;
        for &p in &targets {
            let st = &self.pipes[p].rt.value_sets[v];
            if st.iter().any(|e| e == &entry[..]) {
                return Err(ApiError::ValueSetEntry {
                    set: vs.name,
                    why: "this entry is already in the set",
                });
            }
            if st.len() >= vs.size as usize {
                return Err(ApiError::ValueSetFull {
                    set: vs.name,
                    capacity: vs.size,
                });
            }
        }
        for p in targets {
            self.pipes[p].rt.value_sets[v].entries.extend(&entry);
        }
        Ok(())
    }

    /// Deletes an entry (given as added) on every selected pipe.
    pub fn value_set_delete(
        &mut self,
        pipes: PipeSel,
        name: &str,
        fields: &[(Value, Value)],
    ) -> Result<(), ApiError> {
        let (pl, v) = self.value_set_ref(name)?;
        let entry = self.value_set_entry(pl, v, fields)?;
        let set = self.prog.pipelines[pl].value_sets[v].name.clone();
        let targets = self.target_pipes(pipes, pl, &set)?;
        let at = |st: &crate::state::ValueSetState| st.iter().position(|e| e == &entry[..]);
        if targets
            .iter()
            .any(|&p| at(&self.pipes[p].rt.value_sets[v]).is_none())
        {
            return Err(ApiError::ValueSetEntry {
                set,
                why: "no such entry in the set",
            });
        }
        for p in targets {
            let st = &mut self.pipes[p].rt.value_sets[v];
            if let Some(i) = at(st) {
                let n = st.fields;
                st.entries.drain(i * n..(i + 1) * n);
            }
        }
        Ok(())
    }

    /// Every entry on every selected pipe.
    pub fn value_set_entries(
        &self,
        pipes: PipeSel,
        name: &str,
    ) -> Result<Vec<ValueSetEntry>, ApiError> {
        let (pl, v) = self.value_set_ref(name)?;
        let set = &self.prog.pipelines[pl].value_sets[v].name;
        let mut out = Vec::new();
        for p in self.target_pipes(pipes, pl, set)? {
            for e in self.pipes[p].rt.value_sets[v].iter() {
                out.push(ValueSetEntry {
                    pipe: p as u16,
                    fields: e.to_vec(),
                });
            }
        }
        Ok(out)
    }

    /// Removes every entry on every selected pipe.
    pub fn value_set_clear(&mut self, pipes: PipeSel, name: &str) -> Result<(), ApiError> {
        let (pl, v) = self.value_set_ref(name)?;
        let set = self.prog.pipelines[pl].value_sets[v].name.clone();
        for p in self.target_pipes(pipes, pl, &set)? {
            self.pipes[p].rt.value_sets[v].entries.clear();
        }
        Ok(())
    }
}
