// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {TestToken} from "../dev/TestToken.sol";

/// @title HostileToken (test only)
/// @notice A token that misbehaves the way real ones do, switched by its minter at any time:
///         FEE keeps 1% of every transfer; FALSE answers `false` and moves nothing; SILENT moves and
///         returns no data at all (as USDT does); REENTER calls `target` with `reentryData` in the
///         middle of every transfer. `shrink` takes balance away from a holder (a downward rebase).
contract HostileToken is TestToken {
    enum Mode {
        NORMAL,
        FEE,
        FALSE,
        SILENT,
        REENTER
    }

    Mode public mode;
    address public target;
    bytes public reentryData;
    /// @notice How many times a transfer re-entered `target`, and the last re-entry's revert data.
    uint256 public reentryAttempts;
    bool public lastReentrySucceeded;
    bytes public lastReentryResult;

    constructor(uint8 decimals_) TestToken("Hostile Token", "HOST", decimals_) {}

    function configure(Mode mode_, address target_, bytes calldata reentryData_) external {
        if (msg.sender != minter) revert NotMinter();
        mode = mode_;
        target = target_;
        reentryData = reentryData_;
    }

    /// @notice A downward rebase: `holder` loses `value`.
    function shrink(address holder, uint256 value) external {
        if (msg.sender != minter) revert NotMinter();
        balanceOf[holder] -= value;
        totalSupply -= value;
    }

    function transfer(address to, uint256 value) public override returns (bool) {
        if (mode == Mode.FALSE) return false;
        super.transfer(to, value);
        silentReturn();
        return true;
    }

    function transferFrom(address from, address to, uint256 value) public override returns (bool) {
        if (mode == Mode.FALSE) return false;
        super.transferFrom(from, to, value);
        silentReturn();
        return true;
    }

    function move(address from, address to, uint256 value) internal override {
        if (mode == Mode.REENTER) {
            reentryAttempts += 1;
            (lastReentrySucceeded, lastReentryResult) = target.call(reentryData);
        }
        uint256 fee = mode == Mode.FEE ? value / 100 : 0;
        super.move(from, to, value - fee);
        if (fee != 0) {
            balanceOf[from] -= fee;
            totalSupply -= fee;
        }
    }

    /// @dev In SILENT mode, ends the call with no return data.
    function silentReturn() private view {
        if (mode == Mode.SILENT) {
            assembly {
                return(0, 0)
            }
        }
    }
}
