//! The MCP server: lists the tools of its role, runs them, serves the `pact://` and `hire://`
//! resources and the prompts of the seeds' flows.
//! Tool failures are tool results with `isError: true` (the agent reads them); only an unknown
//! tool or resource is a JSON-RPC error.

use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};

use agentpact_negotiation::{ConversationFilter, NEGOTIATION_CHANNEL};
use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, CompleteRequestParams,
        CompleteResult, CompletionInfo, ContentBlock, CreateTaskResult, CustomRequest, CustomResult,
        ElicitRequest, ElicitRequestParams, GetPromptRequestParams, GetPromptResponse, GetTaskParams,
        GetTaskResult, Implementation, InputRequest, InputRequiredResult, ListPromptsResult,
        ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
        ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Reference, Resource,
        ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, SubscribeRequestParams,
        SubscriptionFilter, Tool, UnsubscribeRequestParams,
    },
    service::{RequestContext, SubscriptionContext},
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::{
    call::{Asked, Asking, Call, Closed},
    chain::Chain,
    confirm::{self, Confirmations, Pages},
    hire,
    input::eth,
    outcome::{Answer, ToolError},
    prompts,
    role::Role,
    tasks::Tasks,
    tools::{self, Tool as ToolRow},
    watch::{self, Ear, Live, Subscriptions},
};

/// One agent's server: its wallet on one chain, its role. Cloning it shares everything, the
/// session's subscriptions too; [`PactServer::session`] makes the server of a new session.
#[derive(Clone)]
pub struct PactServer {
    chain: Arc<Chain>,
    role: Role,
    tools: Arc<Vec<&'static ToolRow>>,
    /// The process's one LISTEN on the index's notification channels, opened at the first session.
    live: Arc<tokio::sync::OnceCell<Live>>,
    /// Where that LISTEN runs: the primary (a read replica refuses LISTEN).
    primary: agentpact_read::Reader,
    /// What this session subscribed to.
    subscriptions: Arc<Subscriptions>,
    /// Where a spend above the threshold is confirmed by a human.
    pages: Pages,
    /// The writes that outlived their call.
    tasks: Tasks,
}

/// The resources every server offers.
const RESOURCES: [(&str, &str, &str); 8] = [
    ("pact://config", "config", "Contract addresses, chain, this wallet, its role and spending cap."),
    ("pact://abi/agent-pact", "agent-pact-abi", "The AgentPact ABI."),
    ("pact://abi/oracle-registry", "oracle-registry-abi", "The OracleRegistry ABI."),
    ("pact://abi/agent-registry", "agent-registry-abi", "The AgentRegistry ABI."),
    (
        "hire://profile",
        "profile",
        "This wallet's agent profile and its statistics as seller, buyer and oracle.",
    ),
    ("hire://contracts", "contracts", "This wallet's pacts, active and past (the newest 100)."),
    ("hire://conversations", "conversations", "This wallet's negotiation threads (the latest 50)."),
    (
        "hire://policy",
        "policy",
        "The wallet policy the human holds this wallet to (budgets, calls, caps, counterparties, expiry, kill switch) and what is used and remains now: plan within it.",
    ),
];

/// How many of this wallet's pacts and conversations `resources/list` names, and completion offers.
const LISTED: u32 = 50;

/// The resources with an id in their address: (template, name, description).
const TEMPLATES: [(&str, &str, &str); 3] = [
    ("pact://pacts/{id}", "pact", "One pact as get-pact shows it, by its id."),
    (
        "hire://agents/{address}",
        "agent",
        "One agent's profile, prices and reputation, by its wallet address.",
    ),
    (
        "hire://conversations/{id}",
        "conversation",
        "One of this wallet's negotiations with every message, by its conversation id.",
    ),
];

impl PactServer {
    /// Runs `tool` as `call` within the call's time, unless the client cancels first. The tool
    /// runs as its own task so that a call which already sent a transaction finishes recording it
    /// after the answer went out (see [`crate::call`]); with `as_task`, that answer is a task
    /// handle the client polls for the result ([`crate::tasks`]).
    async fn run(
        &self,
        tool: &'static ToolRow,
        call: Call,
        args: Value,
        cancelled: &CancellationToken,
        as_task: bool,
    ) -> Ran {
        let limit = self.chain.limits().call_timeout;
        let chain = self.chain.clone();
        let work = call.clone().run(async move {
            let answer = tool.call(&chain, args).await;
            chain.release_unsent().await;
            answer
        });
        let mut task = tokio::spawn(work.in_current_span());
        let stopped_by = tokio::select! {
            joined = &mut task => {
                return Ran::Done(joined.unwrap_or_else(|e| Err(ToolError::Stopped(e))));
            }
            () = tokio::time::sleep(limit) => "its time ran out",
            () = cancelled.cancelled() => "the client cancelled it",
        };
        let hashes = match call.close().await {
            Closed::NothingSent => {
                task.abort();
                if let (Some(guard), Some(admitted)) = (self.chain.guard(), call.admitted()) {
                    guard.release_unsent(&admitted).await;
                }
                tracing::info!("{stopped_by} before it sent anything; stopped");
                return Ran::Done(Err(if cancelled.is_cancelled() {
                    ToolError::Cancelled
                } else {
                    ToolError::TimedOut { seconds: limit.as_secs() }
                }));
            }
            Closed::Sent(hashes) => hashes,
        };
        let last = hashes.last().copied().unwrap_or_default();
        tracing::warn!(tx = %last, "{stopped_by} after it sent a transaction; it goes on until that is mined and recorded");
        let handle = if as_task && !cancelled.is_cancelled() {
            match self.tasks.open(self.chain.chain_id, self.chain.me, tool.name, last).await {
                Ok(handle) => Some(handle),
                Err(e) => {
                    tracing::warn!(error = %e, "could not open a task; answering PENDING");
                    None
                }
            }
        } else {
            None
        };
        let (tasks, id) = (self.tasks.clone(), handle.as_ref().map(|t| t.task_id.clone()));
        tokio::spawn(
            async move {
                let outcome = task.await.unwrap_or_else(|e| Err(ToolError::Stopped(e)));
                match &outcome {
                    Ok(_) => tracing::info!("finished after its answer"),
                    Err(e) => tracing::warn!(code = e.code(), error = %e, "failed after its answer"),
                }
                if let Some(id) = id
                    && let Err(e) = tasks.finish(&id, &result_of(outcome)).await
                {
                    tracing::warn!(error = %e, task = %id, "could not record the task's result");
                }
            }
            .in_current_span(),
        );
        match handle {
            Some(handle) => Ran::Task(handle),
            None => Ran::Done(Err(ToolError::Pending { tx: last.to_string(), seconds: limit.as_secs() })),
        }
    }

    /// The body of one of the fixed resources (`RESOURCES`), or why there is none at `uri`.
    async fn fixed_resource(&self, uri: &str) -> Result<Value, ErrorData> {
        Ok(match uri {
            "pact://config" => self.config().await.map_err(unreadable)?,
            "pact://abi/agent-pact" => abi(agentpact_contracts::artifacts::AGENT_PACT),
            "pact://abi/oracle-registry" => abi(agentpact_contracts::artifacts::ORACLE_REGISTRY),
            "pact://abi/agent-registry" => abi(agentpact_contracts::artifacts::AGENT_REGISTRY),
            "hire://profile" => hire::profile(&self.chain).await.map_err(unreadable)?,
            "hire://contracts" => hire::contracts(&self.chain).await.map_err(unreadable)?,
            "hire://conversations" => hire::conversations(&self.chain).await.map_err(unreadable)?,
            "hire://policy" => hire::policy(&self.chain).await.map_err(unreadable)?,
            other => {
                let known: Vec<&str> = RESOURCES.iter().chain(&TEMPLATES).map(|(uri, _, _)| *uri).collect();
                return Err(ErrorData::resource_not_found(
                    crate::outcome::elide_quoted(&format!(
                        "no resource {other:?}: the resources are {}",
                        known.join(", ")
                    )),
                    None,
                ));
            }
        })
    }

    /// The resource at `uri` when it fills one of [`TEMPLATES`]: read through the tool that shows
    /// the same thing, so a resource and a tool never disagree.
    async fn templated(&self, uri: &str) -> Result<Option<Value>, ToolError> {
        if let Some(id) = uri.strip_prefix("pact://pacts/") {
            let id: u64 = id.parse().map_err(|_| {
                ToolError::Invalid(format!("{uri}: a pact id is a whole number, e.g. pact://pacts/3"))
            })?;
            return self.through("get-pact", json!({ "pactId": id })).await.map(Some);
        }
        if let Some(address) = uri.strip_prefix("hire://agents/") {
            return self.through("get_agent", json!({ "agent_id": address })).await.map(Some);
        }
        if let Some(id) = uri.strip_prefix("hire://conversations/") {
            return hire::conversation(&self.chain, id).await.map(Some);
        }
        Ok(None)
    }

    /// What tool `name` answers with `args`, as data.
    async fn through(&self, name: &str, args: Value) -> Result<Value, ToolError> {
        let tool = tools::find(name).ok_or_else(|| ToolError::NoTool(name.to_owned()))?;
        tool.call(&self.chain, args).await.map(|answer| answer.data)
    }

    /// A server acting as the wallet of `chain` in `role`.
    pub fn new(chain: Arc<Chain>, role: Role) -> Self {
        let tools = tools::listed(role).collect();
        let primary = chain.reader.clone();
        let pages = Pages::loopback(Confirmations::new(primary.pool().clone()));
        let tasks = Tasks::new(primary.pool().clone());
        Self {
            chain,
            role,
            tools: Arc::new(tools),
            live: Arc::default(),
            primary,
            subscriptions: Arc::default(),
            pages,
            tasks,
        }
    }

    /// The server with its subscriptions' LISTEN and its confirmations on `primary`'s database,
    /// when the chain's reader reads a replica of it.
    pub fn listening_on(self, primary: agentpact_read::Reader) -> Self {
        let pages = Pages::loopback(Confirmations::new(primary.pool().clone()));
        let tasks = Tasks::new(primary.pool().clone());
        Self { primary, pages, tasks, ..self }
    }

    /// The server with its confirmation pages served beside `/mcp` ([`crate::http::router`]),
    /// reached at `public` when given, else at the host each request came in on.
    pub fn pages_with_mcp(self, public: Option<String>) -> Self {
        let pages = Pages::with_mcp(self.pages.store().clone(), public);
        Self { pages, ..self }
    }

    /// The store of this server's confirmations.
    pub fn confirmations(&self) -> Confirmations {
        self.pages.store().clone()
    }

    /// The server of a new session: the same wallet and listener, no subscriptions yet.
    pub fn session(&self) -> Self {
        Self { subscriptions: Arc::default(), ..self.clone() }
    }

    /// This wallet's pacts, newest first (at most [`LISTED`]).
    async fn my_pacts(&self) -> Result<Vec<agentpact_read::Pact>, ToolError> {
        Ok(self.chain.my_pacts(LISTED).await?.0)
    }

    /// This wallet's conversations, latest change first (at most [`LISTED`]).
    async fn my_conversations(&self) -> Result<Vec<agentpact_negotiation::ConversationRecord>, ToolError> {
        let c = &self.chain;
        Ok(c.negotiations().conversations(c.chain_id, c.me, ConversationFilter::All, LISTED).await?)
    }

    /// Starts telling this session about changes, once: `resources/updated` for its
    /// subscriptions, `resources/list_changed` when this wallet gains a pact or a conversation;
    /// while the index cannot be read, the session is told once it can ([`watch::follow`]).
    async fn watch_once(&self, peer: &rmcp::Peer<RoleServer>) {
        let started = self.subscriptions.started.get_or_init(|| async {
            let this = self.clone();
            let (subscriptions, chain_id, me) =
                (self.subscriptions.clone(), self.chain.chain_id, self.chain.me);
            let ready = move || {
                let this = this.clone();
                async move { this.live_and_known().await }
            };
            tokio::spawn(watch::follow(ready, peer.clone(), subscriptions, chain_id, me).in_current_span());
        });
        started.await;
    }

    /// The process's listener on the index's changes (started at the first need), and the pacts
    /// this wallet is a party to now (a new one is a list change).
    async fn live_and_known(
        &self,
    ) -> Result<(Live, std::collections::HashSet<alloy::primitives::U256>), String> {
        let live = self
            .live
            .get_or_try_init(|| Live::start(self.primary.pool(), NEGOTIATION_CHANNEL))
            .await
            .map_err(|e| e.to_string())?
            .clone();
        let known = self.my_pacts().await.map_err(|e| e.to_string())?.iter().map(|p| p.id).collect();
        Ok((live, known))
    }

    /// The deployment, this agent's role and caps, and the currencies pacts may be paid in.
    async fn config(&self) -> Result<Value, ToolError> {
        let c = &self.chain;
        let currencies: Vec<Value> = c
            .currencies()
            .await?
            .iter()
            .map(|k| json!({ "symbol": k.symbol, "address": k.address, "decimals": k.decimals }))
            .collect();
        Ok(json!({
            "chainId": c.chain_id,
            "agentPact": c.pact.address(),
            "oracleRegistry": c.registry.address(),
            "agentRegistry": c.agents.address(),
            "wallet": c.me,
            "role": self.role.name(),
            "maxValueEth": eth(c.limits().max_value),
            "maxValueUsdc": eth(c.limits().max_value_usdc),
            "confirmAboveEth": threshold(c.limits().confirm_above),
            "confirmAboveUsdc": threshold(c.limits().confirm_above_usdc),
            "callTimeoutSecs": c.limits().call_timeout.as_secs(),
            "currencies": currencies,
        }))
    }
}

/// A confirmation threshold as the config shows it: null when none is set.
fn threshold(value: alloy::primitives::U256) -> Value {
    if value == alloy::primitives::U256::MAX { Value::Null } else { eth(value).into() }
}

/// A resource that could not be produced, as a JSON-RPC error: invalid params when the address
/// is at fault, internal otherwise; its `data` is the structured error a tool answers, code
/// included.
fn unreadable(e: ToolError) -> ErrorData {
    let data = serde_json::to_value(e.data()).ok();
    if e.blames_input() {
        ErrorData::invalid_params(e.to_string(), data)
    } else {
        ErrorData::internal_error(e.to_string(), data)
    }
}

fn abi(artifact: &str) -> Value {
    serde_json::from_str::<Value>(artifact).map(|a| a["abi"].clone()).unwrap_or(Value::Null)
}

impl ServerHandler for PactServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_prompts()
            .enable_completions()
            .enable_tasks()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("agent-pact", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "On-chain escrow for work between agents. A buyer's request or a seller's offer is a pact; \
                 the counterparty accepts; the seller starts and submits; oracles score; the buyer approves. \
                 Amounts are decimal strings in the pact's currency (ETH or USDC: \"0.5\", \"5\"). Every write is simulated first and refused with the \
                 contract's reason if it would fail. Credits are collected with withdraw.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.tools.iter().map(listed).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).map(listed)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let name = request.name.to_string();
        let Some(tool) = tools::find(&name) else {
            return Err(ErrorData::invalid_params(
                crate::outcome::elide_quoted(&format!("unknown tool {name:?}: list the tools to see them")),
                None,
            ));
        };
        let span = tracing::info_span!("tool", id = NEXT.fetch_add(1, Ordering::Relaxed), name = %name);
        let outcome = if tool.allowed(self.role) {
            let args = request.arguments.map_or(Value::Null, Value::Object);
            let asking = asking(&context, request.request_state, request.input_responses.as_ref());
            let host = context
                .extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.headers.get(axum::http::header::HOST))
                .and_then(|h| h.to_str().ok())
                .map(str::to_owned);
            let pages = self.pages.for_request(host);
            let digest = confirm::call_digest(tool.name, &args);
            let progress = context.meta.get_progress_token();
            let call = Call::new(tool.name, context.peer.clone(), progress, asking, digest, pages);
            let as_task = context.client_capabilities().is_some_and(|c| c.supports_tasks());
            let ran = self.run(tool, call.clone(), args, &context.ct, as_task).instrument(span.clone()).await;
            if let Some(asked) = call.asked() {
                span.in_scope(|| tracing::info!("the human is asked on a confirmation page"));
                return Ok(CallToolResponse::InputRequired(input_required(asked)));
            }
            match ran {
                Ran::Done(outcome) => outcome,
                Ran::Task(handle) => {
                    span.in_scope(|| tracing::info!(task = %handle.task_id, "answered with a task"));
                    return Ok(CallToolResponse::Task(CreateTaskResult::new(handle)));
                }
            }
        } else {
            Err(ToolError::NotInRole { tool: name.clone(), role: self.role.name().to_owned() })
        };
        match &outcome {
            Ok(_) => span.in_scope(|| tracing::info!("done")),
            Err(e) => span.in_scope(|| tracing::info!(code = e.code(), "refused")),
        }
        Ok(result_of(outcome).into())
    }

    /// A request rmcp could not read as the method it names lands here, `tools/call` whose
    /// `arguments` is not an object among them (rmcp's default answers -32601, as if `tools/call`
    /// did not exist): it is invalid params, with a sentence, over stdio and HTTP alike.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(unreadable_request(&request.method, request.params.as_ref()))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let c = &self.chain;
        match self.tasks.get(&request.task_id, c.chain_id, c.me).await {
            Ok(Some(task)) => Ok(GetTaskResult::new(task)),
            Ok(None) => Err(ErrorData::invalid_params(
                crate::outcome::elide_quoted(&format!(
                    "no task {:?} of this wallet: use the taskId a tools/call answered with",
                    request.task_id
                )),
                None,
            )),
            Err(e) => Err(ErrorData::internal_error(format!("the task could not be read: {e}"), None)),
        }
    }

    /// A task here is a transaction already sent: it cannot be called back.
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Err(ErrorData::invalid_request(
            crate::outcome::elide_quoted(&format!(
                "task {:?} waits for a transaction already sent, which cannot be called back; poll tasks/get for its result",
                request.task_id
            )),
            None,
        ))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        prompts::get(&request.name, request.arguments)
            .map(Into::into)
            .map_err(|why| ErrorData::invalid_params(why, None))
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.watch_once(&context.peer).await;
        let uri = watch::canonical(&request.uri).ok_or_else(|| {
            ErrorData::invalid_params(
                crate::outcome::elide_quoted(&format!(
                    "{:?} cannot be subscribed to: subscribe to pact://pacts/{{id}}, hire://agents/{{address}}, \
                     hire://conversations/{{id}}, hire://conversations, hire://contracts or hire://profile",
                    request.uri
                )),
                None,
            )
        })?;
        self.subscriptions.add(uri.clone(), uri);
        Ok(())
    }

    /// A 2026-07-28 stream hears about the resources of [`watch::canonical`]'s kinds and, when
    /// asked, list changes.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let uris = requested.resource_subscriptions.iter().flatten();
        let mut accepted = SubscriptionFilter::new();
        accepted.resource_subscriptions =
            Some(uris.filter(|u| watch::canonical(u).is_some()).cloned().collect());
        accepted.resources_list_changed = requested.resources_list_changed;
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let (live, known) = self.live_and_known().await.map_err(|e| {
            ErrorData::internal_error(format!("cannot follow the index's changes: {e}"), None)
        })?;
        let subscriptions =
            Arc::new(Subscriptions::of(context.accepted().resource_subscriptions.iter().flatten()));
        let ear = Ear::Stream(context.sink().clone());
        tokio::select! {
            () = watch::watch(live, ear, subscriptions, self.chain.chain_id, self.chain.me, known) => {}
            () = context.cancelled() => {}
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Some(uri) = watch::canonical(&request.uri) {
            self.subscriptions.remove(&uri);
        }
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let typed = request.argument.value.trim().to_lowercase();
        let Reference::Resource(template) = &request.r#ref else {
            return Ok(CompleteResult::default());
        };
        let candidates: Vec<String> = match (template.uri.as_str(), request.argument.name.as_str()) {
            ("pact://pacts/{id}", "id") => {
                self.my_pacts().await.map_err(unreadable)?.iter().map(|p| p.id.to_string()).collect()
            }
            ("hire://conversations/{id}", "id") => self
                .my_conversations()
                .await
                .map_err(unreadable)?
                .into_iter()
                .map(|r| r.conversation.id)
                .collect(),
            ("hire://agents/{address}", "address") => {
                let c = &self.chain;
                let search = agentpact_read::AgentSearch::default();
                let page = c
                    .reader
                    .search_agents(c.chain_id, &search, LISTED, None)
                    .await
                    .map_err(|e| unreadable(e.into()))?;
                // One line per agent and capability: each agent once, in the order found.
                let mut seen = std::collections::HashSet::new();
                page.items
                    .iter()
                    .map(|(_, m)| m.agent.address.to_string())
                    .filter(|a| seen.insert(a.clone()))
                    .collect()
            }
            _ => Vec::new(),
        };
        let values: Vec<String> = candidates
            .into_iter()
            .filter(|v| v.to_lowercase().starts_with(&typed))
            .take(CompletionInfo::MAX_VALUES)
            .collect();
        let info = CompletionInfo::with_all_values(values).map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(CompleteResult::new(info))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.watch_once(&context.peer).await;
        let resource = |uri: String, name: String, description: String| {
            Resource::new(uri, name).with_description(description).with_mime_type("application/json")
        };
        let mut resources: Vec<_> = RESOURCES
            .iter()
            .map(|(uri, name, description)| resource((*uri).into(), (*name).into(), (*description).into()))
            .collect();
        // The wallet's own pacts and conversations come from the index; without it the fixed
        // resources are still listed.
        let (pacts, conversations) = match (self.my_pacts().await, self.my_conversations().await) {
            (Ok(pacts), Ok(conversations)) => (pacts, conversations),
            (Err(e), _) | (_, Err(e)) => {
                tracing::warn!(error = %e, "listing only the fixed resources: the index could not be read");
                (Vec::new(), Vec::new())
            }
        };
        for p in pacts {
            let about = format!("Pact #{}: {}, {}.", p.id, p.status.name(), p.status.description());
            resources.push(resource(format!("pact://pacts/{}", p.id), format!("pact-{}", p.id), about));
        }
        for r in conversations {
            let c = &r.conversation;
            let about =
                format!("Negotiation {} between {} and {}: {}.", c.id, c.seeker, c.worker, c.status.name());
            resources.push(resource(format!("hire://conversations/{}", c.id), c.id.clone(), about));
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates = TEMPLATES
            .iter()
            .map(|(template, name, description)| {
                ResourceTemplate::new(*template, *name)
                    .with_description(*description)
                    .with_mime_type("application/json")
            })
            .collect();
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let templated = self.templated(&request.uri).await.map_err(unreadable)?;
        let body = match templated {
            Some(body) => body,
            None => self.fixed_resource(&request.uri).await?,
        };
        let text = serde_json::to_string_pretty(&crate::views::checksummed(body)).unwrap_or_default();
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, request.uri.clone()).with_mime_type("application/json"),
        ])
        .into())
    }
}

/// What running a tool came to: its outcome, or a task still waiting for it.
enum Ran {
    Done(Result<Answer, ToolError>),
    Task(rmcp::model::Task),
}

/// A tool's outcome as MCP says it: an answer, or an error the agent reads (`isError`).
fn result_of(outcome: Result<Answer, ToolError>) -> CallToolResult {
    match outcome {
        Ok(answer) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(answer.text)]);
            result.structured_content = Some(answer.data);
            result
        }
        Err(e) => {
            let mut result = CallToolResult::error(vec![ContentBlock::text(e.to_string())]);
            result.structured_content = serde_json::to_value(e.data()).ok();
            result
        }
    }
}

/// How the client of `context` can ask its human to confirm a spend: by URL-mode elicitation
/// only, inside the call for a 2025-11-25 session, by `input_required` and a retry for a
/// 2026-07-28 request (`state` and `responses` are that retry's).
fn asking(
    context: &RequestContext<RoleServer>,
    state: Option<String>,
    responses: Option<&rmcp::model::InputResponses>,
) -> Asking {
    let by_url = context.client_capabilities().and_then(|c| c.elicitation).is_some_and(|e| e.url.is_some());
    let modern = context.protocol_version().is_some_and(|v| !v.has_initialize());
    match (by_url, modern) {
        (false, _) => Asking::Cannot,
        (true, false) => Asking::Session,
        (true, true) => Asking::Retry(state.map(|token| {
            // The client's answer to the elicitation: anything but "accept" declines.
            let action = responses.and_then(|r| r.get(CONFIRM_KEY)).and_then(|r| r.get("action"));
            (token, action.is_none_or(|a| a == "accept"))
        })),
    }
}

/// The key of the confirmation in an `input_required` result's requests.
const CONFIRM_KEY: &str = "confirm";

/// The `input_required` result that sends the human to `asked`'s page; the retry echoes its token.
fn input_required(asked: Asked) -> InputRequiredResult {
    let params = ElicitRequestParams::UrlElicitationParams {
        meta: None,
        message: asked.message,
        url: asked.url,
        elicitation_id: confirm::elicitation_id(&asked.token),
    };
    let request = InputRequest::Elicitation(ElicitRequest::new(params));
    InputRequiredResult::new(Some([(CONFIRM_KEY.to_owned(), request)].into()), Some(asked.token))
}

/// The MCP methods a client sends this server; rmcp hands one over as a custom request only when
/// its params do not fit the method's shape.
const METHODS: [&str; 13] = [
    "initialize",
    "ping",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "tools/call",
    "tools/list",
];

/// The JSON-RPC error for a request rmcp could not read: invalid params, saying what to send, for
/// a method MCP has; method not found otherwise.
fn unreadable_request(method: &str, params: Option<&Value>) -> ErrorData {
    let quoted = |text: &str| crate::outcome::elide_quoted(&format!("{text:?}"));
    if method == "tools/call" {
        let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        let arguments = params.and_then(|p| p.get("arguments")).filter(|a| !a.is_null());
        let why = match (name, arguments) {
            (Some(name), Some(arguments)) if !arguments.is_object() => format!(
                "{}: {}, not {}",
                tools::find(name).map_or_else(|| quoted(name), |t| t.name.to_owned()),
                tools::NOT_AN_OBJECT,
                tools::describe(arguments)
            ),
            _ => "tools/call takes params { \"name\": the tool's name, \"arguments\": a JSON object of its inputs }"
                .to_owned(),
        };
        return ErrorData::invalid_params(why, None);
    }
    if METHODS.contains(&method) {
        return ErrorData::invalid_params(
            format!("the params of {method} do not have the shape MCP gives them"),
            None,
        );
    }
    ErrorData::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, format!("no method {}", quoted(method)), None)
}

/// `tool` as `tools/list` shows it: name, description, input and output schemas, annotations.
fn listed(tool: &&ToolRow) -> Tool {
    Tool::new(tool.name, tool.description, Arc::new(tool.input_schema.clone()))
        .with_raw_output_schema(Arc::new(tool.output_schema.clone()))
        .annotate(tool.annotations())
}
