//! The governance pipeline: construction checks, containment per failure
//! mode, observe mode, carry and select, the shipped stages, and the trace as
//! a turn record reports it.

/// Named so that `cargo test contracts` selects these tests.
mod contracts {

    use std::sync::{Arc, Mutex};

    use serde_json::{json, Value};
    use symfonic_evals::contracts::{
        ApprovedProcedure, BudgetCeiling, CredentialScrubber, FailureMode, FnStage,
        GovernancePipeline, GovernanceStage, Payload, Phase, PipelineError, ProceduralPrecondition,
        Rule, RuleBook, StageError, StageVerdict, Subject, BUDGET_CEILING_STAGE,
        CREDENTIAL_SCRUB_STAGE, PRECONDITION_STAGE, REDACTED, REFLECTION_STAGE,
    };
    use symfonic_evals::{StageOutcome, StageRecord};

    type Stages = Vec<Box<dyn GovernanceStage>>;

    fn critic<F>(judge: F) -> Box<dyn GovernanceStage>
    where
        F: Fn(&mut Subject) -> Result<StageVerdict, StageError> + Send + Sync + 'static,
    {
        Box::new(FnStage::new(
            REFLECTION_STAGE,
            Phase::Draft,
            FailureMode::FailOpen,
            judge,
        ))
    }

    fn us_only() -> ApprovedProcedure {
        ApprovedProcedure::new(
            "issue_refund",
            json!(["lookup_account", {"state": {"path": "region", "op": "eq", "value": "US"}}]),
            "verify the account region",
        )
    }

    fn full_pipeline() -> GovernancePipeline {
        let stages: Stages = vec![
            Box::new(CredentialScrubber::new()),
            Box::new(BudgetCeiling::new(3)),
            Box::new(ProceduralPrecondition::new(vec![us_only()])),
            critic(|subject| match subject.payload {
                Payload::Draft { .. } => Ok(StageVerdict::pass()),
                _ => Ok(StageVerdict::abstain()),
            }),
        ];
        GovernancePipeline::new(stages, RuleBook::canonical()).unwrap()
    }

    fn refund(region: &str) -> Subject {
        Subject::tool_call("issue_refund", json!({"order": 1}))
            .with_state(json!({"region": region}))
    }

    // ---- construction ---------------------------------------------------------

    #[test]
    fn an_order_the_rulebook_contradicts_is_refused() {
        let stages: Stages = vec![
            Box::new(BudgetCeiling::new(1)),
            Box::new(CredentialScrubber::new()),
        ];
        let error = GovernancePipeline::new(stages, RuleBook::canonical()).unwrap_err();
        assert_eq!(
            error,
            PipelineError::OutOfOrder {
                stage: CREDENTIAL_SCRUB_STAGE.into(),
                after: BUDGET_CEILING_STAGE.into()
            }
        );
    }

    #[test]
    fn unknown_repeated_and_empty_are_refused() {
        let unknown: Stages = vec![Box::new(FnStage::new(
            "sentiment",
            Phase::Draft,
            FailureMode::FailOpen,
            |_| Ok(StageVerdict::pass()),
        ))];
        assert_eq!(
            GovernancePipeline::new(unknown, RuleBook::canonical()).unwrap_err(),
            PipelineError::UnknownStage {
                stage: "sentiment".into()
            }
        );
        let twice: Stages = vec![
            Box::new(BudgetCeiling::new(1)),
            Box::new(BudgetCeiling::new(2)),
        ];
        assert!(matches!(
            GovernancePipeline::new(twice, RuleBook::canonical()),
            Err(PipelineError::DuplicateStage { .. })
        ));
        assert_eq!(
            GovernancePipeline::new(Stages::new(), RuleBook::canonical()).unwrap_err(),
            PipelineError::Empty
        );
    }

    #[test]
    fn a_disarmed_stage_is_refused() {
        // A scrubber declared fail-open would let a secret through when it breaks.
        let fail_open_scrubber: Stages = vec![Box::new(FnStage::new(
            CREDENTIAL_SCRUB_STAGE,
            Phase::Query,
            FailureMode::FailOpen,
            |_| Ok(StageVerdict::pass()),
        ))];
        assert_eq!(
            GovernancePipeline::new(fail_open_scrubber, RuleBook::canonical()).unwrap_err(),
            PipelineError::FailureModeMismatch {
                stage: CREDENTIAL_SCRUB_STAGE.into(),
                declared: FailureMode::FailOpen,
                rule: FailureMode::FailClosed
            }
        );
        // A precondition gate declared on the draft rung would judge after the tool ran.
        let late_gate: Stages = vec![Box::new(FnStage::new(
            PRECONDITION_STAGE,
            Phase::Draft,
            FailureMode::FailClosed,
            |_| Ok(StageVerdict::pass()),
        ))];
        assert_eq!(
            GovernancePipeline::new(late_gate, RuleBook::canonical()).unwrap_err(),
            PipelineError::PhaseMismatch {
                stage: PRECONDITION_STAGE.into(),
                declared: Phase::Draft,
                rule: Phase::ToolCall
            }
        );
    }

    #[test]
    fn a_custom_rulebook_is_honoured() {
        let book = RuleBook::new(vec![
            Rule::new(
                BUDGET_CEILING_STAGE,
                Phase::ToolCall,
                FailureMode::FailClosed,
            ),
            Rule::new(
                CREDENTIAL_SCRUB_STAGE,
                Phase::Query,
                FailureMode::FailClosed,
            ),
        ])
        .unwrap();
        let stages: Stages = vec![
            Box::new(BudgetCeiling::new(1)),
            Box::new(CredentialScrubber::new()),
        ];
        let pipeline = GovernancePipeline::new(stages, book).unwrap();
        assert_eq!(
            pipeline.stage_names(),
            [BUDGET_CEILING_STAGE, CREDENTIAL_SCRUB_STAGE]
        );
    }

    // ---- running and containment -----------------------------------------------

    #[test]
    fn every_answer_is_traced_and_a_rejection_stops_the_run() {
        let pipeline = full_pipeline();
        let mut allowed = refund("US");
        let trace = pipeline.run(&mut allowed);
        assert!(trace.admitted());
        let outcomes: Vec<_> = trace
            .entries()
            .iter()
            .map(|e| (e.stage.as_str(), e.outcome))
            .collect();
        assert_eq!(
            outcomes,
            [
                (CREDENTIAL_SCRUB_STAGE, StageOutcome::Passed),
                (BUDGET_CEILING_STAGE, StageOutcome::Passed),
                (PRECONDITION_STAGE, StageOutcome::Passed),
                (REFLECTION_STAGE, StageOutcome::Abstained),
            ]
        );

        let mut blocked = refund("EU");
        let trace = pipeline.run(&mut blocked);
        assert_eq!(trace.blocked_by(), Some(PRECONDITION_STAGE));
        assert_eq!(
            trace.entries().len(),
            3,
            "the critic never saw a blocked call"
        );
        let gate = trace.entry(PRECONDITION_STAGE).unwrap();
        assert_eq!(gate.outcome, StageOutcome::Rejected);
        assert_eq!((gate.counts["checked"], gate.counts["refused"]), (1, 1));
        assert!(!gate.reason.as_deref().unwrap().contains("EU"));
    }

    #[test]
    fn a_broken_fail_closed_stage_blocks() {
        let failing: Stages = vec![Box::new(FnStage::new(
            CREDENTIAL_SCRUB_STAGE,
            Phase::Query,
            FailureMode::FailClosed,
            |_| Err(StageError::new("secret store unreachable")),
        ))];
        let trace = GovernancePipeline::new(failing, RuleBook::canonical())
            .unwrap()
            .run(&mut Subject::query("hello"));
        assert_eq!(trace.blocked_by(), Some(CREDENTIAL_SCRUB_STAGE));
        let entry = &trace.entries()[0];
        assert_eq!(entry.outcome, StageOutcome::Broken);
        assert_eq!(entry.error.as_deref(), Some("secret store unreachable"));

        let panicking: Stages = vec![
            Box::new(FnStage::new(
                CREDENTIAL_SCRUB_STAGE,
                Phase::Query,
                FailureMode::FailClosed,
                |_| panic!("scrubber bug"),
            )),
            critic(|_| Ok(StageVerdict::pass())),
        ];
        let trace = GovernancePipeline::new(panicking, RuleBook::canonical())
            .unwrap()
            .run(&mut Subject::draft("answer"));
        assert_eq!(trace.blocked_by(), Some(CREDENTIAL_SCRUB_STAGE));
        assert_eq!(trace.entries().len(), 1);
        assert_eq!(
            trace.entries()[0].error.as_deref(),
            Some("panicked: scrubber bug")
        );
    }

    #[test]
    fn a_broken_fail_open_stage_is_recorded_and_admits() {
        let stages: Stages = vec![
            Box::new(CredentialScrubber::new()),
            critic(|subject| panic!("critic saw {:?}", subject.payload)),
        ];
        let trace = GovernancePipeline::new(stages, RuleBook::canonical())
            .unwrap()
            .run(&mut Subject::draft("the refund is done"));
        assert!(trace.admitted());
        let entry = trace.entry(REFLECTION_STAGE).unwrap();
        assert_eq!(entry.outcome, StageOutcome::Broken);
        let error = entry.error.as_deref().unwrap();
        assert!(
            !error.contains("refund"),
            "a formatted panic may quote content: {error}"
        );

        let erroring: Stages = vec![critic(|_| Err(StageError::new("model timeout")))];
        let trace = GovernancePipeline::new(erroring, RuleBook::canonical())
            .unwrap()
            .run(&mut Subject::draft("x"));
        assert!(trace.admitted());
        assert_eq!(trace.entries()[0].outcome, StageOutcome::Broken);
    }

    #[test]
    fn observe_mode_downgrades_a_rejection_and_admits() {
        let pipeline = full_pipeline().observing(PRECONDITION_STAGE).unwrap();
        let trace = pipeline.run(&mut refund("EU"));
        assert!(trace.admitted());
        let gate = trace.entry(PRECONDITION_STAGE).unwrap();
        assert_eq!(gate.outcome, StageOutcome::Downgraded);
        assert_eq!(gate.counts["refused"], 1);
        assert!(gate.reason.is_some());
        assert_eq!(trace.entries().len(), 4, "later stages still ran");

        // Observe mode is about rejections; breakage stays with the failure mode.
        let broken: Stages = vec![Box::new(FnStage::new(
            BUDGET_CEILING_STAGE,
            Phase::ToolCall,
            FailureMode::FailClosed,
            |_| Err(StageError::new("counter unavailable")),
        ))];
        let observed = GovernancePipeline::new(broken, RuleBook::canonical())
            .unwrap()
            .observing_all();
        assert_eq!(
            observed.run(&mut refund("US")).blocked_by(),
            Some(BUDGET_CEILING_STAGE)
        );

        assert_eq!(
            full_pipeline().observing("nonexistent").unwrap_err(),
            PipelineError::NotInPipeline {
                stage: "nonexistent".into()
            }
        );
    }

    #[test]
    fn the_scrubber_removes_a_credential_before_a_later_stage_sees_it() {
        let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
        let spy = Arc::clone(&seen);
        let stages: Stages = vec![
            Box::new(CredentialScrubber::new()),
            Box::new(FnStage::new(
                BUDGET_CEILING_STAGE,
                Phase::ToolCall,
                FailureMode::FailClosed,
                move |subject| {
                    if let Payload::ToolCall { arguments, .. } = &subject.payload {
                        spy.lock().unwrap().push(arguments.clone());
                    }
                    Ok(StageVerdict::pass())
                },
            )),
        ];
        let pipeline = GovernancePipeline::new(stages, RuleBook::canonical()).unwrap();
        let gate = pipeline
            .for_phase(Phase::ToolCall, &[CREDENTIAL_SCRUB_STAGE])
            .unwrap()
            .unwrap();
        let secret = "sk-live0123456789abcdefXYZ";
        let mut call = Subject::tool_call(
            "http_get",
            json!({"url": "https://api.test/v1", "note": format!("use {secret}"), "api_key": "k-42"}),
        );
        let trace = gate.run(&mut call);
        assert!(trace.admitted());
        assert_eq!(
            trace.entry(CREDENTIAL_SCRUB_STAGE).unwrap().counts["redacted"],
            2
        );
        let seen = seen.lock().unwrap();
        let text = seen[0].to_string();
        assert!(!text.contains(secret) && !text.contains("k-42"), "{text}");
        assert_eq!(seen[0]["api_key"], REDACTED);
        assert_eq!(seen[0]["url"], "https://api.test/v1");
        // The admitted call carries the scrubbed arguments too.
        let Payload::ToolCall { arguments, .. } = &call.payload else {
            unreachable!()
        };
        assert_eq!(arguments, &seen[0]);
    }

    // ---- rungs ----------------------------------------------------------------

    #[test]
    fn for_phase_returns_that_rung_or_nothing() {
        let pipeline = full_pipeline();
        let tool = pipeline.for_phase(Phase::ToolCall, &[]).unwrap().unwrap();
        assert_eq!(
            tool.stage_names(),
            [BUDGET_CEILING_STAGE, PRECONDITION_STAGE]
        );
        assert!(pipeline
            .for_phase(Phase::ToolResult, &[])
            .unwrap()
            .is_none());
        let draft = pipeline.for_phase(Phase::Draft, &[]).unwrap().unwrap();
        assert_eq!(draft.stage_names(), [REFLECTION_STAGE]);
    }

    #[test]
    fn carried_stages_lead_every_rung_once() {
        let pipeline = full_pipeline();
        let carry = [CREDENTIAL_SCRUB_STAGE];
        let names = |phase| {
            pipeline.for_phase(phase, &carry).unwrap().map(|p| {
                p.stage_names()
                    .into_iter()
                    .map(String::from)
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            names(Phase::Query).unwrap(),
            [CREDENTIAL_SCRUB_STAGE],
            "not added twice"
        );
        assert_eq!(
            names(Phase::ToolCall).unwrap(),
            [
                CREDENTIAL_SCRUB_STAGE,
                BUDGET_CEILING_STAGE,
                PRECONDITION_STAGE
            ]
        );
        assert_eq!(
            names(Phase::ToolResult).unwrap(),
            [CREDENTIAL_SCRUB_STAGE],
            "a rung with only carried stages is still mounted"
        );
        assert_eq!(
            names(Phase::Draft).unwrap(),
            [CREDENTIAL_SCRUB_STAGE, REFLECTION_STAGE]
        );

        // Carrying a stage that is not in the pipeline adds nothing.
        let bare: Stages = vec![critic(|_| Ok(StageVerdict::pass()))];
        let bare = GovernancePipeline::new(bare, RuleBook::canonical()).unwrap();
        assert!(bare.for_phase(Phase::ToolCall, &carry).unwrap().is_none());
    }

    #[test]
    fn a_carried_stage_keeps_its_rank() {
        // Carrying the critic onto the tool rung would put it before stages the
        // rulebook ranks earlier.
        let error = full_pipeline()
            .for_phase(Phase::ToolCall, &[REFLECTION_STAGE])
            .unwrap_err();
        assert_eq!(
            error,
            PipelineError::OutOfOrder {
                stage: BUDGET_CEILING_STAGE.into(),
                after: REFLECTION_STAGE.into()
            }
        );
        assert!(matches!(
            full_pipeline().for_phase(Phase::ToolCall, &["nope"]),
            Err(PipelineError::UnknownStage { .. })
        ));
    }

    #[test]
    fn select_keeps_canonical_order_and_observe_mode() {
        let pipeline = full_pipeline().observing(PRECONDITION_STAGE).unwrap();
        let picked = pipeline
            .select(&[REFLECTION_STAGE, PRECONDITION_STAGE, CREDENTIAL_SCRUB_STAGE])
            .unwrap()
            .unwrap();
        assert_eq!(
            picked.stage_names(),
            [CREDENTIAL_SCRUB_STAGE, PRECONDITION_STAGE, REFLECTION_STAGE]
        );
        assert!(picked.is_observed(PRECONDITION_STAGE));
        let only_budget = pipeline.select(&[BUDGET_CEILING_STAGE]).unwrap().unwrap();
        assert!(!only_budget.is_observed(PRECONDITION_STAGE));
        assert!(pipeline.select(&[]).unwrap().is_none());
        assert!(matches!(
            pipeline.select(&["critic"]),
            Err(PipelineError::UnknownStage { .. })
        ));
    }

    // ---- shipped stages ---------------------------------------------------------

    #[test]
    fn the_budget_ceiling_counts_calls_per_turn() {
        let pipeline = full_pipeline();
        let mut fourth = refund("US").with_prior_tool_calls(3);
        let trace = pipeline.run(&mut fourth);
        assert_eq!(trace.blocked_by(), Some(BUDGET_CEILING_STAGE));
        let entry = trace.entry(BUDGET_CEILING_STAGE).unwrap();
        assert_eq!((entry.counts["calls"], entry.counts["ceiling"]), (4, 3));
        let answer = pipeline.run(&mut Subject::draft("done"));
        assert_eq!(
            answer.entry(BUDGET_CEILING_STAGE).unwrap().outcome,
            StageOutcome::Abstained
        );
    }

    #[test]
    fn the_precondition_gate_abstains_on_ungoverned_tools_and_records_what_it_read() {
        let pipeline = full_pipeline();
        let mut lookup =
            Subject::tool_call("lookup_account", json!({})).with_state(json!({"region": "EU"}));
        let trace = pipeline.run(&mut lookup);
        assert!(trace.admitted());
        let gate = trace.entry(PRECONDITION_STAGE).unwrap();
        assert_eq!(gate.outcome, StageOutcome::Abstained);
        assert_eq!((gate.counts["checked"], gate.counts["refused"]), (0, 0));
        assert!(lookup.consulted.is_empty());

        let mut refund = refund("US");
        pipeline.run(&mut refund);
        assert_eq!(refund.consulted, [us_only().identity()]);
    }

    #[test]
    fn the_gate_names_what_it_judged_not_a_label() {
        // The same tool and text with another rule is another procedure.
        let relabelled = ApprovedProcedure::new(
            "issue_refund",
            json!([{"state": {"path": "region", "op": "eq", "value": "EU"}}]),
            "verify the account region",
        );
        assert_ne!(relabelled.identity(), us_only().identity());
        let gate = ProceduralPrecondition::new(vec![relabelled.clone()]);
        let mut subject = refund("EU");
        gate.judge(&mut subject).unwrap();
        assert_eq!(subject.consulted, [relabelled.identity()]);
        assert_eq!(
            relabelled.identity(),
            symfonic_evals::procedure_identity(
                "issue_refund",
                &json!([{"state": {"path": "region", "op": "eq", "value": "EU"}}]),
                "verify the account region",
            )
        );
    }

    #[test]
    fn the_precondition_gate_judges_every_governing_procedure() {
        let premium = ApprovedProcedure::new(
            "issue_refund",
            json!([{"state": {"path": "tier", "op": "in", "value": ["gold"]}}]),
            "gold accounts only",
        );
        let premium_identity = premium.identity();
        let gate = ProceduralPrecondition::new(vec![us_only(), premium]);
        let mut subject = refund("US");
        let verdict = gate.judge(&mut subject).unwrap();
        assert_eq!(
            (verdict.counts["checked"], verdict.counts["refused"]),
            (2, 1)
        );
        assert_eq!(subject.consulted, [us_only().identity(), premium_identity]);
    }

    #[test]
    fn a_store_that_cannot_be_read_fails_the_gate_closed() {
        let gate = ProceduralPrecondition::from_source(|_| Err(StageError::new("store locked")));
        let stages: Stages = vec![Box::new(gate)];
        let trace = GovernancePipeline::new(stages, RuleBook::canonical())
            .unwrap()
            .run(&mut refund("US"));
        assert_eq!(trace.blocked_by(), Some(PRECONDITION_STAGE));
        assert_eq!(trace.entries()[0].outcome, StageOutcome::Broken);
    }

    #[test]
    fn the_trace_converts_into_the_turn_records_governance_trace() {
        let trace = full_pipeline().run(&mut refund("EU"));
        let records: Vec<StageRecord> = (&trace).into();
        assert_eq!(records, trace.to_stage_records());
        let expected = vec![
            StageRecord::new(CREDENTIAL_SCRUB_STAGE, StageOutcome::Passed).count("redacted", 0),
            StageRecord::new(BUDGET_CEILING_STAGE, StageOutcome::Passed)
                .count("calls", 1)
                .count("ceiling", 3),
            StageRecord::new(PRECONDITION_STAGE, StageOutcome::Rejected)
                .count("checked", 1)
                .count("refused", 1),
        ];
        assert_eq!(records, expected);

        let mut whole = trace.clone();
        whole.extend(full_pipeline().run(&mut Subject::draft("ok")));
        assert_eq!(
            whole.blocked_by(),
            Some(PRECONDITION_STAGE),
            "the first block wins"
        );
        assert_eq!(Vec::<StageRecord>::from(whole).len(), 3 + 4);
    }
}
