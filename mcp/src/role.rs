//! Roles (seed 000): which tools an agent's server lists and accepts (each tool's row in
//! `tools::catalog` names its roles). Every role reads pacts;
//! writes go to the roles whose part in a pact needs them; the market and negotiation tools follow
//! seed 000's table (seeker: search, get_agent, negotiate, sign_contract, submit_feedback; worker:
//! register, update_profile, respond_negotiation, sign_contract), "negotiate" being
//! `send_proposal` and `respond_negotiation`.

use std::str::FromStr;

use agentpact_contracts::closed_set;

closed_set! {
    /// What an agent does in the market, named as on the command line.
    #[derive(Default)]
    pub enum Role {
        /// Hires: creates requests for work, accepts offers, reviews, disputes, reclaims.
        Seeker => "seeker",
        /// Works: offers services, accepts requests, starts and submits work.
        Worker => "worker",
        /// Verifies: registers as an oracle, scores work, finalizes verification.
        Oracle => "oracle",
        /// Settles disputes.
        Arbitrator => "arbitrator",
        /// Everything.
        #[default]
        Full => "full",
    }
}

impl Role {
    /// The names of the tools an agent in this role lists (`tools/list`), in the catalog's
    /// order: what a test expects a client to see, rather than a count written by hand.
    pub fn tools(self) -> Vec<&'static str> {
        crate::tools::listed(self).map(|t| t.name).collect()
    }

    /// Whether an agent in this role may list and call `tool`.
    /// (The tools' table says which roles get each tool.)
    pub fn allows(self, tool: &str) -> bool {
        crate::tools::find(tool).is_some_and(|t| t.allowed(self))
    }
}

impl FromStr for Role {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::from_name(s)
            .ok_or_else(|| format!("unknown role {s:?}: use one of {}", Self::names().join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_gate_writes_and_share_reads() {
        assert!(Role::Seeker.allows("approve-work") && !Role::Seeker.allows("submit-work"));
        assert!(Role::Worker.allows("submit-work") && !Role::Worker.allows("approve-work"));
        assert!(Role::Oracle.allows("submit-verification") && !Role::Oracle.allows("create-pact"));
        assert!(Role::Arbitrator.allows("resolve-dispute") && !Role::Arbitrator.allows("raise-dispute"));
        assert!(Role::ALL.iter().all(|r| r.allows("get-pact")));
        assert!(Role::Full.allows("resolve-dispute"));
        // Seed 000's table for the market tools.
        let market = ["search_agents", "get_agent", "submit_feedback", "register_agent", "update_profile"];
        let allowed = |r: Role| market.iter().filter(|t| r.allows(t)).copied().collect::<Vec<_>>();
        assert_eq!(allowed(Role::Seeker), ["search_agents", "get_agent", "submit_feedback"]);
        assert_eq!(allowed(Role::Worker), ["register_agent", "update_profile"]);
        assert_eq!(allowed(Role::Full), market);
        assert!(allowed(Role::Oracle).is_empty() && allowed(Role::Arbitrator).is_empty());
        // Negotiation: seekers propose ("negotiate"), both answer and sign, everyone reads.
        let talk = ["send_proposal", "respond_negotiation", "sign_contract"];
        let talks = |r: Role| talk.iter().filter(|t| r.allows(t)).copied().collect::<Vec<_>>();
        assert_eq!(talks(Role::Seeker), talk);
        assert_eq!(talks(Role::Worker), ["respond_negotiation", "sign_contract"]);
        assert!(Role::ALL.iter().all(|r| r.allows("get_conversations") && r.allows("get_contract")));
        assert_eq!("worker".parse(), Ok(Role::Worker));
        assert!("boss".parse::<Role>().is_err());
    }
}
