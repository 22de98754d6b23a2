//! The prompts a human picks to start a flow: seed 002's three (a buyer's request for work, a
//! seller's offer, collecting after a silent buyer's review period) and seed 000's hire flow (find
//! an agent under a price, negotiate, sign). Each is a user message naming the tools in order,
//! with the human's arguments in it.

use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};
use serde_json::{Map, Value};

/// The longest argument value taken: a prompt is a few sentences, not a document.
pub const MAX_ARGUMENT: usize = 500;

/// One prompt: its name, what it starts, its arguments (name, description, required) and how
/// its text is made of them.
struct Flow {
    name: &'static str,
    description: &'static str,
    arguments: &'static [(&'static str, &'static str, bool)],
    text: fn(&Args) -> String,
}

/// A prompt's arguments as the client sent them, every required one present.
struct Args(Map<String, Value>);

impl Args {
    /// The argument `name`, or `default` when it was not given.
    fn get<'a>(&'a self, name: &str, default: &'a str) -> &'a str {
        self.0.get(name).and_then(Value::as_str).map_or(default, str::trim)
    }
}

const FLOWS: [Flow; 4] = [
    Flow {
        name: "request-work",
        description: "Seed 002, flow 1: post a request for work as buyer, then see it through to approval.",
        arguments: &[
            ("task", "What the work is, e.g. \"a React hero section\"", true),
            ("payment", "The payment, e.g. \"0.5\"", true),
            ("currency", "ETH (default) or USDC", false),
            ("deadline_days", "Days until the deadline (default 7)", false),
        ],
        text: |a| {
            format!(
                "Create a pact as buyer for this work: {}. Pay {} {}, deadline in {} days. Call create-pact \
                 with role \"buyer\", the payment and currency, oracles and weights, a threshold and an \
                 arbitrator; tell me the deposit it took. Then follow the pact with get-pact: once a seller \
                 accepts, submits and the oracles pass it (PENDING_APPROVAL), show me the delivery and ask \
                 me whether to approve-work or reject-work.",
                a.get("task", ""),
                a.get("payment", ""),
                a.get("currency", "ETH"),
                a.get("deadline_days", "7")
            )
        },
    },
    Flow {
        name: "offer-service",
        description: "Seed 002, flow 2: list a service as seller for a buyer to accept, then deliver it.",
        arguments: &[
            ("service", "What is offered, e.g. \"flight booking assistance\"", true),
            ("price", "The price, e.g. \"0.1\"", true),
            ("currency", "ETH (default) or USDC", false),
        ],
        text: |a| {
            format!(
                "Offer this service as seller: {} for {} {}. Call create-pact with role \"seller\" (it stakes \
                 10%), then follow the pact with get-pact. When a buyer has accepted it (FUNDED), call \
                 start-work, do the work, and submit-work with the hash of the deliverable; then wait for the \
                 oracles and the buyer's approval, and withdraw the payment.",
                a.get("service", ""),
                a.get("price", ""),
                a.get("currency", "ETH")
            )
        },
    },
    Flow {
        name: "collect-after-review",
        description: "Seed 002, flow 3: collect a verified pact whose buyer stayed silent through the review period.",
        arguments: &[("pact_id", "The pact, e.g. \"5\"", true)],
        text: |a| {
            format!(
                "Pact #{} passed its oracles' verification and waits for the buyer's approval. Read it with \
                 get-pact: if its review period has ended, call auto-approve (anyone may) and then withdraw; \
                 if not, tell me when it ends.",
                a.get("pact_id", "")
            )
        },
    },
    Flow {
        name: "hire-agent",
        description: "Seed 000: find an agent for a capability under a price, negotiate, and sign the contract.",
        arguments: &[
            ("capability", "What is needed, e.g. \"logo-design\"", true),
            ("max_price", "The most to pay, e.g. \"10\"", true),
            ("currency", "USDC (default) or ETH", false),
            ("task", "The task to propose (default: the capability)", false),
        ],
        text: |a| {
            let capability = a.get("capability", "");
            format!(
                "Find me an agent for {capability} under {max} {currency}. Call search_agents with \
                 capability \"{capability}\", max_price {max} and currency {currency}; show me the best \
                 matches (reputation, price). For the one I pick, read get_agent, then send_proposal with \
                 the task \"{task}\", a budget no higher than {max} {currency} and a deadline; answer with \
                 respond_negotiation until the terms are agreed, asking me before accepting anything above \
                 the budget. Then sign_contract and tell me the pact it made.",
                max = a.get("max_price", ""),
                currency = a.get("currency", "USDC"),
                task = a.get("task", capability)
            )
        },
    },
];

/// Every prompt, in a stable order.
pub fn list() -> Vec<Prompt> {
    FLOWS
        .iter()
        .map(|f| {
            let arguments = f
                .arguments
                .iter()
                .map(|(name, description, required)| {
                    let mut argument = PromptArgument::new(*name);
                    argument.description = Some((*description).to_owned());
                    argument.required = Some(*required);
                    argument
                })
                .collect();
            Prompt::new(f.name, Some(f.description), Some(arguments))
        })
        .collect()
}

/// The prompt `name` made with `arguments`; the error says what is missing or wrong.
pub fn get(name: &str, arguments: Option<Map<String, Value>>) -> Result<GetPromptResult, String> {
    let flow = FLOWS.iter().find(|f| f.name == name).ok_or_else(|| {
        let names: Vec<&str> = FLOWS.iter().map(|f| f.name).collect();
        format!("there is no prompt {name:?}; prompts/list has {}", names.join(", "))
    })?;
    let args = Args(arguments.unwrap_or_default());
    for (key, value) in &args.0 {
        let known = flow.arguments.iter().any(|(n, _, _)| n == key);
        let text = value.as_str();
        if !known || text.is_none_or(|t| t.len() > MAX_ARGUMENT || t.contains('\0')) {
            return Err(format!(
                "prompt {name}: argument {key:?} is {}",
                if known { "not a string of at most 500 characters" } else { "not one it takes" }
            ));
        }
    }
    if let Some((missing, _, _)) =
        flow.arguments.iter().find(|(n, _, required)| *required && args.get(n, "").is_empty())
    {
        return Err(format!("prompt {name} needs the argument {missing:?}"));
    }
    let message = PromptMessage::new_text(Role::User, (flow.text)(&args));
    Ok(GetPromptResult::new(vec![message]).with_description(flow.description))
}
