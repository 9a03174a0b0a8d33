//! The review door: the one public way to see and decide on learned
//! procedures, driven by operator turns.
//!
//! An operator lists the procedures, approves a draft naming the tool it
//! governs and the state predicates that must hold, or rejects it. What the
//! door shows and what the gate enforces are read from the same rows and
//! named by the same identity digest (the library's `procedure_identity`),
//! so a reviewer and the gate cannot be looking at different procedures.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{json, Value};
use symfonic_evals::contracts::{ApprovedProcedure, PREDICATE_OPERATORS};
use symfonic_evals::{procedural_review_rows, procedure_identity, TurnError};

use crate::store::{store_error, Status, Store, StoredProcedure};
use crate::twins::Flaw;

/// A procedure's identity digest: over the tool it governs, its full
/// precondition list and its text.
pub fn identity(procedure: &StoredProcedure) -> String {
    procedure_identity(
        &procedure.governed_tool,
        &procedure.precondition,
        &procedure.action,
    )
}

/// Approvals held in process memory instead of the store: the flaw of the
/// `ApprovalOnlyInMemory` twin. Keyed by procedure id.
type MemoryApprovals = Arc<Mutex<BTreeMap<i64, (String, Value)>>>;

/// The approved procedures as this instance last read them: the
/// `PolicyCachePerInstance` twin's cache.
type InstanceCache = Arc<Mutex<Vec<StoredProcedure>>>;

/// Revocations held in memory and written to the store on the way out:
/// the `RevocationWrittenAtShutdown` twin's write-behind cache. The door
/// and the gate read through it, so a revocation holds at once; it reaches
/// the store when the last clone of the door is dropped, as at an orderly
/// shutdown.
#[derive(Debug)]
struct PendingRevocations {
    store: Arc<Store>,
    /// Procedure name, and the conversation the operator revoked it in.
    names: Mutex<BTreeMap<String, String>>,
}

impl PendingRevocations {
    fn names(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.names.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for PendingRevocations {
    fn drop(&mut self) {
        for (name, conversation) in std::mem::take(&mut *self.names()) {
            let _ = self.store.revoke(&name, &conversation);
        }
    }
}

/// The review door over the procedure store. Cheap to clone; clones share
/// the store (and, in the flawed twins, the in-memory approvals or cache).
#[derive(Clone, Debug)]
pub struct ReviewDoor {
    store: Arc<Store>,
    memory: Option<MemoryApprovals>,
    cache: Option<InstanceCache>,
    revocations: Option<Arc<PendingRevocations>>,
    flaw: Option<Flaw>,
}

impl ReviewDoor {
    /// A door that persists every decision in the store (with `flaw`
    /// switched on, if it is one of the door's).
    pub fn new(store: Arc<Store>, flaw: Option<Flaw>) -> Self {
        let memory = (flaw == Some(Flaw::ApprovalOnlyInMemory)).then(MemoryApprovals::default);
        let revocations = (flaw == Some(Flaw::RevocationWrittenAtShutdown)).then(|| {
            Arc::new(PendingRevocations {
                store: Arc::clone(&store),
                names: Mutex::default(),
            })
        });
        let mut door = Self {
            store,
            memory,
            cache: None,
            revocations,
            flaw,
        };
        if flaw == Some(Flaw::PolicyCachePerInstance) {
            door.cache = Some(InstanceCache::default());
            door.refresh_cache();
        }
        door
    }

    /// Reloads the instance cache from the store (the twin's only refresh:
    /// at open and after this door's own decisions).
    fn refresh_cache(&self) {
        if let Some(cache) = &self.cache {
            let approved = self.approved().unwrap_or_default();
            *cache.lock().unwrap_or_else(PoisonError::into_inner) = approved;
        }
    }

    /// Every procedure, as a reviewer sees it.
    ///
    /// # Errors
    ///
    /// `StoreError` when the store cannot be read.
    pub fn list(&self) -> Result<Vec<StoredProcedure>, TurnError> {
        let mut procedures = self.store.procedures().map_err(store_error)?;
        if let Some(memory) = &self.memory {
            let approvals = memory.lock().unwrap_or_else(PoisonError::into_inner);
            for procedure in &mut procedures {
                if let Some((tool, precondition)) = approvals.get(&procedure.id) {
                    procedure.status = Status::Approved;
                    procedure.governed_tool.clone_from(tool);
                    procedure.precondition = precondition.clone();
                }
            }
        }
        if let Some(revocations) = &self.revocations {
            let revoked = revocations.names();
            for procedure in &mut procedures {
                if let Some(conversation) = revoked.get(&procedure.name) {
                    if procedure.status == Status::Approved {
                        procedure.status = Status::Revoked;
                        procedure.reviewed_in.clone_from(conversation);
                    }
                }
            }
        }
        Ok(procedures)
    }

    /// The review projection: sorted `(status, governed tool)` rows.
    ///
    /// # Errors
    ///
    /// `StoreError` when the store cannot be read.
    pub fn rows(&self) -> Result<Vec<(String, String)>, TurnError> {
        let procedures = self.list()?;
        Ok(procedural_review_rows(
            procedures
                .iter()
                .map(|p| (p.status.as_str(), p.governed_tool.as_str())),
        ))
    }

    /// How the door names an approved procedure: its identity digest (the
    /// `IdentityIsRowLabel` twin names it by its row instead).
    fn name(&self, procedure: &StoredProcedure) -> String {
        if self.flaw == Some(Flaw::IdentityIsRowLabel) {
            format!("procedure-{}", procedure.id)
        } else {
            identity(procedure)
        }
    }

    /// Sorted names of the approved procedures.
    ///
    /// # Errors
    ///
    /// `StoreError` when the store cannot be read.
    pub fn approved_ids(&self) -> Result<Vec<String>, TurnError> {
        let mut ids: Vec<String> = self.approved()?.iter().map(|p| self.name(p)).collect();
        ids.sort();
        Ok(ids)
    }

    /// The names of the procedures the gate read, from the identity digests
    /// it recorded, sorted. A digest that names no approved procedure is
    /// kept as it is: it is evidence the gate read something else.
    ///
    /// # Errors
    ///
    /// `StoreError` when the store cannot be read.
    pub fn enforced_ids<'a>(
        &self,
        consulted: impl IntoIterator<Item = &'a String>,
    ) -> Result<Vec<String>, TurnError> {
        let approved = self.approved()?;
        let mut ids: Vec<String> = consulted
            .into_iter()
            .map(|digest| {
                approved
                    .iter()
                    .find(|p| identity(p) == *digest)
                    .map_or_else(|| digest.clone(), |p| self.name(p))
            })
            .collect();
        ids.sort();
        ids.dedup();
        Ok(ids)
    }

    /// The approved procedures as data, `{"tool", "precondition", "text"}`
    /// each, exactly as stored: what a reviewer approved, from which anyone
    /// can recompute the identities the door and the gate report.
    ///
    /// # Errors
    ///
    /// `StoreError` when the store cannot be read.
    pub fn published(&self) -> Result<Vec<Value>, TurnError> {
        Ok(self
            .approved()?
            .iter()
            .map(|p| json!({"tool": p.governed_tool, "precondition": p.precondition, "text": p.action}))
            .collect())
    }

    /// The approved procedures, as the gate and the recall block read them.
    ///
    /// # Errors
    ///
    /// `StoreError` when the store cannot be read.
    pub fn approved(&self) -> Result<Vec<StoredProcedure>, TurnError> {
        Ok(self
            .list()?
            .into_iter()
            .filter(|p| p.status == Status::Approved)
            .collect())
    }

    /// Every approved procedure, in the library's gate shape.
    ///
    /// # Errors
    ///
    /// `StoreError` when the store cannot be read.
    pub fn approved_for_all(&self) -> Result<Vec<ApprovedProcedure>, TurnError> {
        Ok(self.approved()?.iter().map(gate_shape).collect())
    }

    /// The approved procedures governing `tool`, in the library's gate shape.
    ///
    /// # Errors
    ///
    /// `StoreError` when the store cannot be read.
    pub fn approved_for(&self, tool: &str) -> Result<Vec<ApprovedProcedure>, TurnError> {
        if let Some(cache) = &self.cache {
            let cached = cache.lock().unwrap_or_else(PoisonError::into_inner);
            return Ok(cached
                .iter()
                .filter(|p| p.governed_tool == tool)
                .map(gate_shape)
                .collect());
        }
        let governs = |p: &StoredProcedure| match p.status {
            Status::Approved => true,
            // Everything that was ever approved, withdrawn or not.
            Status::Revoked => self.flaw == Some(Flaw::RevokedStillGoverns),
            Status::Draft | Status::Rejected | Status::Guardrail => false,
        };
        Ok(self
            .list()?
            .iter()
            .filter(|p| governs(p) && p.governed_tool == tool)
            .map(gate_shape)
            .collect())
    }

    fn the_one_draft(&self, selector: &str) -> Result<StoredProcedure, TurnError> {
        let words: Vec<String> = selector
            .split_whitespace()
            .map(str::to_lowercase)
            .filter(|w| !["the", "a", "an", "procedure", "draft", "rule"].contains(&w.as_str()))
            .collect();
        let mut matching: Vec<StoredProcedure> = self
            .list()?
            .into_iter()
            .filter(|p| p.status == Status::Draft)
            .filter(|p| {
                let text = format!("{} {} {}", p.kind, p.trigger, p.action).to_lowercase();
                words.iter().all(|w| text.contains(w.as_str()))
            })
            .collect();
        match matching.len() {
            1 => Ok(matching.remove(0)),
            n => Err(TurnError::new(
                "OperatorCommandError",
                format!("the selector matches {n} drafts; exactly one is needed"),
            )),
        }
    }

    /// Approves the one draft `selector` names, governing `tool` under
    /// `predicates`, in the operator's `conversation`.
    ///
    /// # Errors
    ///
    /// `OperatorCommandError` unless exactly one draft matches; `StoreError`.
    pub fn approve(
        &self,
        selector: &str,
        tool: &str,
        predicates: &[Value],
        conversation: &str,
    ) -> Result<(), TurnError> {
        let draft = self.the_one_draft(selector)?;
        if self.flaw == Some(Flaw::ReviewApprovesEveryDraft) {
            // The selector is checked, then every draft on file approved.
            for draft in self
                .list()?
                .into_iter()
                .filter(|p| p.status == Status::Draft)
            {
                self.approve_draft(draft, tool, predicates, conversation, "")?;
            }
            return Ok(());
        }
        self.approve_draft(draft, tool, predicates, conversation, "")
    }

    /// Approves the one draft whose text contains `fragment` under the
    /// operator's `name`: the structured review door's approval.
    ///
    /// # Errors
    ///
    /// `NoSuchDraft` unless exactly one draft matches; `StoreError`.
    pub fn approve_named(
        &self,
        fragment: &str,
        name: &str,
        tool: &str,
        predicates: &[Value],
        conversation: &str,
    ) -> Result<(), TurnError> {
        // The admin API's request reader takes the rule's first predicate.
        let predicates = match self.flaw {
            Some(Flaw::ReviewDoorDropsConjunct) => &predicates[..predicates.len().min(1)],
            _ => predicates,
        };
        let draft = if self.flaw == Some(Flaw::RejectedDraftApprovable) {
            // The admin API looks the text up among drafts and rejected
            // drafts alike, as if a rejection were a draft's note.
            self.the_procedure_containing(fragment, &[Status::Draft, Status::Rejected])?
        } else {
            self.the_draft_containing(fragment)?
        };
        self.approve_draft(draft, tool, predicates, conversation, name)
    }

    /// The one draft whose text contains `fragment`: how the structured
    /// door names a draft.
    fn the_draft_containing(&self, fragment: &str) -> Result<StoredProcedure, TurnError> {
        self.the_procedure_containing(fragment, &[Status::Draft])
    }

    /// The one procedure in one of `statuses` whose text contains
    /// `fragment`.
    fn the_procedure_containing(
        &self,
        fragment: &str,
        statuses: &[Status],
    ) -> Result<StoredProcedure, TurnError> {
        let mut matching: Vec<StoredProcedure> = self
            .list()?
            .into_iter()
            .filter(|p| statuses.contains(&p.status))
            .filter(|p| format!("{} {}: {}", p.kind, p.trigger, p.action).contains(fragment))
            .collect();
        if matching.len() != 1 {
            return Err(TurnError::new(
                "NoSuchDraft",
                format!("{} drafts match; exactly one is needed", matching.len()),
            ));
        }
        Ok(matching.remove(0))
    }

    /// Rejects the one draft whose text contains `fragment`: the structured
    /// review door's rejection. The row stays on file as rejected, so
    /// consolidation never drafts the lesson again.
    ///
    /// # Errors
    ///
    /// `NoSuchDraft` unless exactly one draft matches; `StoreError`.
    pub fn reject_named(&self, fragment: &str, conversation: &str) -> Result<(), TurnError> {
        let draft = self.the_draft_containing(fragment)?;
        self.store
            .reject(draft.id, conversation)
            .map_err(store_error)?;
        Ok(())
    }

    fn approve_draft(
        &self,
        draft: StoredProcedure,
        tool: &str,
        predicates: &[Value],
        conversation: &str,
        name: &str,
    ) -> Result<(), TurnError> {
        let precondition = with_predicates(&draft.precondition, predicates);
        if let Some(memory) = &self.memory {
            let mut approvals = memory.lock().unwrap_or_else(PoisonError::into_inner);
            approvals.insert(draft.id, (tool.to_owned(), precondition));
            return Ok(());
        }
        self.store
            .approve(draft.id, tool, &precondition, conversation, name)
            .map_err(store_error)?;
        self.refresh_cache();
        Ok(())
    }

    /// Replaces the state predicates of the approved procedure `name`,
    /// keeping its other precondition entries.
    ///
    /// # Errors
    ///
    /// `NoSuchProcedure` when no approved procedure has the name; `StoreError`.
    pub fn amend(
        &self,
        name: &str,
        predicates: &[Value],
        conversation: &str,
    ) -> Result<(), TurnError> {
        let current = self
            .approved()?
            .into_iter()
            .find(|p| p.name == name)
            .ok_or_else(no_such_procedure)?;
        let kept: Vec<Value> = current
            .precondition
            .as_array()
            .into_iter()
            .flatten()
            .filter(|entry| entry.get("state").is_none())
            .cloned()
            .collect();
        let precondition = with_predicates(&Value::Array(kept), predicates);
        match self.store.amend(name, &precondition, conversation) {
            Ok(true) => {
                self.refresh_cache();
                Ok(())
            }
            Ok(false) => Err(no_such_procedure()),
            Err(error) => Err(store_error(error)),
        }
    }

    /// Withdraws the approved procedure `name`.
    ///
    /// # Errors
    ///
    /// `NoSuchProcedure` when no approved procedure has the name; `StoreError`.
    pub fn revoke(&self, name: &str, conversation: &str) -> Result<(), TurnError> {
        if let Some(revocations) = &self.revocations {
            // Taken at once, written when the desk shuts down.
            if !self
                .approved()?
                .iter()
                .any(|p| !name.is_empty() && p.name == name)
            {
                return Err(no_such_procedure());
            }
            revocations
                .names()
                .insert(name.to_owned(), conversation.to_owned());
            return Ok(());
        }
        match self.store.revoke(name, conversation) {
            Ok(true) => {
                self.refresh_cache();
                Ok(())
            }
            Ok(false) => Err(no_such_procedure()),
            Err(error) => Err(store_error(error)),
        }
    }

    /// Rejects the one draft `selector` names, in the operator's
    /// `conversation`.
    ///
    /// # Errors
    ///
    /// `OperatorCommandError` unless exactly one draft matches; `StoreError`.
    pub fn reject(&self, selector: &str, conversation: &str) -> Result<(), TurnError> {
        let draft = self.the_one_draft(selector)?;
        self.store
            .reject(draft.id, conversation)
            .map_err(store_error)?;
        Ok(())
    }
}

/// A draft's precondition list with `predicates` appended as state rules.
fn with_predicates(precondition: &Value, predicates: &[Value]) -> Value {
    let mut entries: Vec<Value> = precondition.as_array().cloned().unwrap_or_default();
    entries.extend(predicates.iter().map(|p| json!({ "state": p })));
    Value::Array(entries)
}

fn no_such_procedure() -> TurnError {
    TurnError::new("NoSuchProcedure", "no approved procedure has that name")
}

fn gate_shape(procedure: &StoredProcedure) -> ApprovedProcedure {
    ApprovedProcedure::new(
        &procedure.governed_tool,
        procedure.precondition.clone(),
        &procedure.action,
    )
}

/// An operator turn the desk understands.
#[derive(Debug, Clone, PartialEq)]
pub enum OperatorCommand {
    /// `list procedures`
    List,
    /// `approve <selector>: governs <tool> [when <path> <op> [<value>] [and ...]]`
    Approve {
        /// Which draft, in words.
        selector: String,
        /// The tool it will govern.
        tool: String,
        /// State predicates that must hold.
        predicates: Vec<Value>,
    },
    /// `reject <selector>`
    Reject {
        /// Which draft, in words.
        selector: String,
    },
}

fn parse_value(op: &str, text: &str) -> Value {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return value;
    }
    if op == "in" {
        return Value::Array(
            text.split(',')
                .map(|item| parse_value("eq", item.trim()))
                .collect(),
        );
    }
    Value::String(text.to_owned())
}

fn parse_predicate(text: &str) -> Result<Value, String> {
    let mut words = text.trim().splitn(3, ' ');
    let (Some(path), Some(op)) = (words.next(), words.next()) else {
        return Err("a predicate reads `<path> <op> <value>`".into());
    };
    if !PREDICATE_OPERATORS.contains(&op) {
        return Err(format!("unknown operator `{op}`"));
    }
    match (op, words.next().map(str::trim)) {
        ("exists", None) => Ok(json!({ "path": path, "op": op })),
        ("exists", Some(_)) => Err("`exists` takes no value".into()),
        (_, Some(value)) if !value.is_empty() => {
            Ok(json!({ "path": path, "op": op, "value": parse_value(op, value) }))
        }
        _ => Err(format!("operator `{op}` needs a value")),
    }
}

impl OperatorCommand {
    /// Parses an operator turn; `None` when the prompt is not one.
    pub fn parse(prompt: &str) -> Option<Result<Self, String>> {
        let prompt = prompt.trim();
        let lower = prompt.to_lowercase();
        if lower == "list procedures" {
            return Some(Ok(Self::List));
        }
        if let Some(selector) = lower.strip_prefix("reject ") {
            return Some(Ok(Self::Reject {
                selector: selector.trim().to_owned(),
            }));
        }
        lower.strip_prefix("approve ")?;
        let rest = &prompt["approve ".len()..];
        Some(Self::parse_approval(rest))
    }

    fn parse_approval(rest: &str) -> Result<Self, String> {
        let (selector, clause) = rest
            .split_once(':')
            .ok_or("an approval reads `approve <which>: governs <tool> when ...`")?;
        let clause = clause.trim();
        let after = clause
            .strip_prefix("governs ")
            .ok_or("an approval must name the tool it governs")?;
        let (tool, conditions) = match after.split_once(" when ") {
            Some((tool, conditions)) => (tool.trim(), Some(conditions)),
            None => (after.trim(), None),
        };
        if tool.is_empty() || tool.contains(' ') {
            return Err("the governed tool must be one name".into());
        }
        let predicates = conditions
            .map(|c| {
                c.split(" and ")
                    .map(parse_predicate)
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?
            .unwrap_or_default();
        Ok(Self::Approve {
            selector: selector.trim().to_owned(),
            tool: tool.to_owned(),
            predicates,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_approval_the_pack_sends() {
        let command = OperatorCommand::parse(
            "approve the refund procedure: governs issue_refund when region eq US",
        );
        assert_eq!(
            command,
            Some(Ok(OperatorCommand::Approve {
                selector: "the refund procedure".into(),
                tool: "issue_refund".into(),
                predicates: vec![json!({"path": "region", "op": "eq", "value": "US"})],
            }))
        );
    }

    #[test]
    fn parses_lists_numbers_and_exists() {
        let Some(Ok(OperatorCommand::Approve { predicates, .. })) = OperatorCommand::parse(
            "approve refund: governs issue_refund when region in US, CA and tier eq 2 and account.id exists",
        ) else {
            panic!("expected an approval");
        };
        assert_eq!(
            predicates,
            [
                json!({"path": "region", "op": "in", "value": ["US", "CA"]}),
                json!({"path": "tier", "op": "eq", "value": 2}),
                json!({"path": "account.id", "op": "exists"}),
            ]
        );
    }

    #[test]
    fn refuses_malformed_approvals() {
        for bad in [
            "approve refund governs issue_refund",
            "approve refund: issue_refund",
            "approve refund: governs issue_refund when region like US",
            "approve refund: governs issue_refund when region eq",
        ] {
            assert!(matches!(OperatorCommand::parse(bad), Some(Err(_))), "{bad}");
        }
        assert_eq!(OperatorCommand::parse("refund order 3"), None);
    }
}
