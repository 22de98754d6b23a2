// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AgentPactLifecycle} from "./AgentPactLifecycle.sol";
import {AgentPactViews} from "./AgentPactViews.sol";
import {Currencies} from "./Currencies.sol";
import {OracleRegistry} from "./OracleRegistry.sol";
import {STAGE_LIMIT, STAKE_PARTS} from "./PactStorage.sol";

/// @title AgentPact
/// @notice Escrow for a piece of work between two agents. Either party creates a pact with the terms
///         (payment, deadline, oracles and their weights, pass threshold, arbitrator, review period);
///         the other accepts by depositing its side. Each side stakes 10% of the payment. Oracles
///         score submitted work, the buyer approves (or the review period lapses), and the escrow pays
///         out. Every payout is credited to a balance that its owner pulls with `withdraw`.
///
///         Every non-terminal status has an exit that one party can take alone, and every clock is
///         bounded (deadline <= 365 days ahead, review period <= 30 days), so each exit opens:
///         NEGOTIATING   -> creator cancels, or anyone after `acceptBy`        (creator refunded)
///         FUNDED        -> anyone after the deadline                          (buyer takes all)
///         IN_PROGRESS   -> anyone after the deadline                          (buyer takes all)
///         PENDING_VERIFY-> anyone finalizes after the verification window     (silent oracles score 0)
///         PENDING_APPROVAL -> anyone auto-approves after the review period    (seller paid)
///         DISPUTED      -> anyone after the dispute window                    (each side refunded)
///
///         While a pact is funded, started, submitted or disputed, either party may offer to end it
///         with the payment divided (`proposeSettlement`); the other ends it by accepting that very
///         offer (`acceptSettlement`), with no arbitrator. The arbitrator may rule a division too
///         (`resolveDisputeShare`). Shares are basis points of the payment, to the seller.
///
///         Every window closes for everyone at the same second: an act allowed at second `t` of a
///         window (accept, reject, dispute) is refused at `t + 1`, where the exit that ends it opens.
///         Acceptance closes at `acceptBy`, at least `MIN_WORK_WINDOW` before the deadline, so an
///         accepted seller always has time to deliver. A pact may name its `counterparty`: then no
///         one else can accept it.
///
///         A pact is paid in one currency (`Terms.currency`): native ETH, or a token on the
///         deployment's allowlist (`Currencies`). Payment, both stakes, every credit and its
///         withdrawal are in that currency. A token deposit can come with an EIP-2612 permit
///         (`createPactWithPermit`, `acceptPactWithPermit`) or an allowance approved beforehand.
///
///         This contract is the escrow's core: creation, acceptance, cancel, deposits and
///         withdrawals, every token call the escrow makes. Every other act runs in the modules it
///         creates (`AgentPactLifecycle`, then `AgentPactViews`), by DELEGATECALL on this contract's
///         storage; callers see one address and one ABI (`PactStorage` says how).
contract AgentPact is Currencies {
    /// @notice Review period used when a pact is created with zero.
    uint64 public constant DEFAULT_REVIEW_PERIOD = 3 days;
    /// @notice Most oracles one pact may name (bounds every loop over them). At most 15: each has
    ///         a bit of `Stage.voided`, beside the arbitrator's bit 15 (rules.rs asserts it).
    uint256 public constant MAX_ORACLES = 10;
    /// @notice Each side's stake on a stage is its amount / STAKE_DIVISOR (10%).
    uint256 public constant STAKE_DIVISOR = STAKE_PARTS;
    /// @notice Most stages one pact may have (bounds every loop over them; docs/contracts.md §Stages).
    uint256 public constant MAX_STAGES = STAGE_LIMIT;
    /// @notice Largest payment, in base units (keeps payment + stakes far from overflow).
    uint256 public constant MAX_PAYMENT = type(uint128).max;
    /// @notice Seconds between the close of acceptance and the deadline, at the least: the time an
    ///         accepted seller is sure to have for the work.
    uint64 public constant MIN_WORK_WINDOW = 1 hours;
    /// @notice Latest deadline, in seconds from the pact's creation.
    uint64 public constant MAX_DURATION = 365 days;
    /// @notice Longest review period.
    uint64 public constant MAX_REVIEW_PERIOD = 30 days;
    /// @notice Shortest review period: the time a buyer is sure to have to look at verified work.
    uint64 public constant MIN_REVIEW_PERIOD = 1 hours;
    /// @notice Lowest pass mark: a threshold of 0 would pass work every oracle scored 0.
    uint8 public constant MIN_THRESHOLD = 1;
    /// @notice Longest spec URI, in bytes.
    uint256 public constant MAX_SPEC_URI = 256;

    /// @notice The registry whose active oracles pacts may name.
    OracleRegistry public immutable registry;
    /// @notice The module every act after creation runs in (`AgentPactLifecycle`), created here.
    AgentPactLifecycle public immutable lifecycle;

    /// @param tokens The ERC-20 tokens pacts may be paid in besides ETH, fixed for good.
    constructor(OracleRegistry registry_, address[] memory tokens) Currencies(tokens) {
        registry = registry_;
        lifecycle = new AgentPactLifecycle(new AgentPactViews());
    }

    /// @notice Every selector the core does not implement runs in the lifecycle module, on this
    ///         contract's storage (and from there in the views module). Takes no ETH: no module
    ///         function does.
    fallback() external {
        forward(address(lifecycle));
    }

    /// @notice Number of pacts created; ids run from 0 to pactCount - 1.
    function pactCount() external view returns (uint256) {
        return nextPactId;
    }

    // ---------------------------------------------------------------- creating and accepting

    /// @notice Propose a pact of one stage: the whole payment, due by the deadline. A buyer deposits
    ///         payment + 10%; a seller deposits 10% of the payment: as `msg.value` for ETH, from an
    ///         approved allowance for a token.
    /// @return pactId The new pact's id.
    function createPact(Terms calldata t) external payable nonReentrant returns (uint256 pactId) {
        return open(t, oneStage(t), msg.value, noPermit());
    }

    /// @notice `createPact` for a token pact, the creator's deposit allowed by an EIP-2612 permit
    ///         signed for exactly that deposit: one transaction, no approval beforehand.
    function createPactWithPermit(Terms calldata t, Permit calldata permit)
        external
        nonReentrant
        returns (uint256 pactId)
    {
        return open(t, oneStage(t), 0, permit);
    }

    /// @notice Propose a pact in 1 to `MAX_STAGES` stages, each with its amount (summing to
    ///         `t.payment`, each at least `STAKE_DIVISOR`) and its deadline (non-decreasing, the last
    ///         being `t.deadline`, the first at least `MIN_WORK_WINDOW` after `acceptBy`). Each side
    ///         stakes a tenth of every stage. Every stage then runs on its own (`submitStage`,
    ///         `approveStage`, …); a settlement divides the stages still live. A token deposit needs
    ///         an allowance approved beforehand: a permit variant would compile the creation a
    ///         fourth time, 6.3 KB the core keeps free (docs/contracts.md §Stages).
    function createStagedPact(Terms calldata t, StageTerms[] calldata stages_)
        external
        payable
        nonReentrant
        returns (uint256 pactId)
    {
        return open(t, stages_, msg.value, noPermit());
    }

    /// @notice Join an open pact as the missing side, depositing that side's amount (`msg.value` for
    ///         ETH, an approved allowance for a token). Only until `acceptBy`, and only as the named
    ///         counterparty when the pact names one.
    function acceptPact(uint256 pactId) external payable nonReentrant {
        join(pactId, msg.value, noPermit());
    }

    /// @notice `acceptPact` for a token pact, the deposit allowed by an EIP-2612 permit signed for
    ///         exactly that deposit.
    function acceptPactWithPermit(uint256 pactId, Permit calldata permit) external nonReentrant {
        join(pactId, 0, permit);
    }

    /// @dev Checks the terms and stages, records the pact and takes the creator's deposit.
    function open(Terms calldata t, StageTerms[] memory stages_, uint256 value, Permit memory permit)
        private
        returns (uint256 pactId)
    {
        if (!acceptsCurrency(t.currency)) revert CurrencyNotAllowed(t.currency);
        uint256 stake = checkStages(t, stages_);
        uint64 acceptBy = checkClocks(t, stages_[0].deadline);
        if (bytes(t.specUri).length > MAX_SPEC_URI) revert SpecUriTooLong(bytes(t.specUri).length, MAX_SPEC_URI);
        if (t.threshold > 100) revert ThresholdTooHigh(t.threshold);
        if (t.threshold < MIN_THRESHOLD) revert ThresholdTooLow(t.threshold, MIN_THRESHOLD);
        if (t.arbitrator == address(0) || t.arbitrator == msg.sender) revert InvalidArbitrator(t.arbitrator);
        if (t.counterparty == msg.sender || (t.counterparty != address(0) && t.counterparty == t.arbitrator)) {
            revert ConflictOfInterest(t.counterparty);
        }
        checkOracles(t.oracles, t.weights, t.counterparty);

        bool byBuyer = t.initiator == Initiator.BUYER;
        uint256 deposit = byBuyer ? t.payment + stake : stake;

        pactId = nextPactId++;
        PactRecord storage p = pacts[pactId];
        p.initiator = t.initiator;
        p.arbitrator = t.arbitrator;
        p.counterparty = t.counterparty;
        p.threshold = t.threshold;
        p.deadline = t.deadline;
        p.acceptBy = acceptBy;
        p.reviewPeriod = t.reviewPeriod == 0 ? DEFAULT_REVIEW_PERIOD : t.reviewPeriod;
        p.currency = t.currency;
        p.payment = t.payment;
        p.specHash = t.specHash;
        p.specUri = t.specUri;
        p.oracles = t.oracles;
        p.weights = t.weights;
        if (byBuyer) {
            p.buyer = msg.sender;
            p.buyerStake = stake;
        } else {
            p.seller = msg.sender;
            p.sellerStake = stake;
        }
        ledgers[pactId].stages = uint8(stages_.length);
        for (uint256 k = 0; k < stages_.length; k++) {
            Stage storage s = stages[pactId][k];
            s.amount = uint128(stages_[k].amount);
            s.deadline = stages_[k].deadline;
        }
        emitCreated(pactId, p, stake, deposit);
        if (stages_.length > 1) emit PactStaged(pactId, stages_);
        takeDeposit(t.currency, deposit, value, permit);
    }

    /// @dev Checks the accepter and takes its deposit (the other side's): every stage is FUNDED.
    function join(uint256 pactId, uint256 value, Permit memory permit) private {
        PactRecord storage p = pactAt(pactId, Status.NEGOTIATING);
        if (block.timestamp > p.acceptBy) revert AcceptWindowClosed(p.acceptBy);
        if (p.counterparty != address(0) && msg.sender != p.counterparty) revert NotCounterparty(p.counterparty);
        if (msg.sender == p.arbitrator || isPactOracle(p, msg.sender) || msg.sender == creatorOf(p)) {
            revert ConflictOfInterest(msg.sender);
        }
        uint256 deposit;
        if (p.initiator == Initiator.BUYER) {
            p.seller = msg.sender;
            p.sellerStake = p.buyerStake;
            deposit = p.buyerStake;
        } else {
            p.buyer = msg.sender;
            p.buyerStake = p.sellerStake;
            deposit = p.payment + p.sellerStake;
        }
        uint256 n = ledgers[pactId].stages;
        for (uint256 k = 0; k < n; k++) {
            stages[pactId][k].status = Status.FUNDED;
        }
        p.status = Status.FUNDED;
        emit PactAccepted(pactId, msg.sender, p.buyer, p.seller, deposit);
        takeDeposit(p.currency, deposit, value, permit);
    }

    /// @notice The creator takes back an unaccepted pact and its deposit.
    function cancelPact(uint256 pactId) external nonReentrant {
        PactRecord storage p = pactAt(pactId, Status.NEGOTIATING);
        if (msg.sender != creatorOf(p)) revert NotCreator();
        p.status = Status.REFUNDED;
        emit PactCancelled(pactId, msg.sender);
        endUnaccepted(pactId, p, Ending.WITHDRAWN);
    }

    // ---------------------------------------------------------------- internals

    /// @dev A one-stage pact's stage: the whole payment, due by the deadline.
    function oneStage(Terms calldata t) private pure returns (StageTerms[] memory one) {
        one = new StageTerms[](1);
        one[0] = StageTerms(t.payment, t.deadline);
    }

    /// @dev Checks the stages against the terms and returns each side's stake: the sum of a tenth of
    ///      every stage. Each amount is bounded before the sum is taken, so it cannot overflow.
    function checkStages(Terms calldata t, StageTerms[] memory stages_) private pure returns (uint256 stake) {
        uint256 n = stages_.length;
        if (n == 0 || n > MAX_STAGES) revert StageCountOutOfRange(n, 1, MAX_STAGES);
        uint256 sum = 0;
        for (uint256 k = 0; k < n; k++) {
            uint256 amount = stages_[k].amount;
            if (amount < STAKE_DIVISOR) revert PaymentTooSmall(amount, STAKE_DIVISOR);
            if (amount > MAX_PAYMENT) revert PaymentTooLarge(amount, MAX_PAYMENT);
            if (k > 0 && stages_[k].deadline < stages_[k - 1].deadline) {
                revert StageDeadlineOutOfOrder(k, stages_[k].deadline, stages_[k - 1].deadline);
            }
            sum += amount;
            stake += amount / STAKE_DIVISOR;
        }
        if (sum != t.payment) revert StageAmountsSum(sum, t.payment);
        if (t.payment > MAX_PAYMENT) revert PaymentTooLarge(t.payment, MAX_PAYMENT);
        if (stages_[n - 1].deadline != t.deadline) revert LastStageDeadline(stages_[n - 1].deadline, t.deadline);
    }

    /// @dev Checks the deadlines and the review period against their bounds and returns the last
    ///      second of acceptance: `t.acceptBy`, or `MIN_WORK_WINDOW` before the first stage's
    ///      deadline (`first`) when it is zero.
    function checkClocks(Terms calldata t, uint64 first) private view returns (uint64 acceptBy) {
        uint64 now_ = uint64(block.timestamp);
        if (t.deadline <= now_) revert DeadlineInPast(t.deadline, now_);
        uint64 earliest = now_ + MIN_WORK_WINDOW + 1;
        uint64 latest = now_ + MAX_DURATION;
        if (t.deadline < earliest || t.deadline > latest) revert DeadlineOutOfRange(t.deadline, earliest, latest);
        if (first < earliest) revert DeadlineOutOfRange(first, earliest, latest);
        uint64 lastAccept = first - MIN_WORK_WINDOW;
        acceptBy = t.acceptBy == 0 ? lastAccept : t.acceptBy;
        if (acceptBy <= now_ || acceptBy > lastAccept) revert AcceptByOutOfRange(t.acceptBy, now_ + 1, lastAccept);
        if (t.reviewPeriod > MAX_REVIEW_PERIOD) revert ReviewPeriodTooLong(t.reviewPeriod, MAX_REVIEW_PERIOD);
        if (t.reviewPeriod != 0 && t.reviewPeriod < MIN_REVIEW_PERIOD) {
            revert ReviewPeriodTooShort(t.reviewPeriod, MIN_REVIEW_PERIOD);
        }
    }

    function checkOracles(address[] calldata oracles, uint8[] calldata weights, address counterparty)
        private
        view
    {
        if (oracles.length == 0 || oracles.length > MAX_ORACLES) {
            revert OracleCountOutOfRange(oracles.length, 1, MAX_ORACLES);
        }
        if (oracles.length != weights.length) revert LengthMismatch(oracles.length, weights.length);
        uint256 sum = 0;
        for (uint256 i = 0; i < oracles.length; i++) {
            address o = oracles[i];
            if (weights[i] == 0) revert ZeroWeight(o);
            if (o == msg.sender || o == counterparty) revert ConflictOfInterest(o);
            for (uint256 j = 0; j < i; j++) {
                if (oracles[j] == o) revert DuplicateOracle(o);
            }
            // At most MAX_ORACLES view calls into this deployment's own registry (docs/contracts.md §Slither).
            // slither-disable-next-line calls-loop
            if (!registry.isActive(o)) revert OracleNotActive(o);
            sum += weights[i];
        }
        if (sum != 100) revert WeightsSum(sum);
    }

    function emitCreated(uint256 pactId, PactRecord storage p, uint256 stake, uint256 deposit) private {
        emit PactCreated(
            pactId,
            msg.sender,
            p.counterparty,
            p.initiator,
            p.arbitrator,
            p.specHash,
            p.specUri,
            p.deadline,
            p.acceptBy,
            p.reviewPeriod,
            p.threshold,
            p.currency,
            p.payment,
            stake,
            deposit,
            p.oracles,
            p.weights
        );
    }
}
