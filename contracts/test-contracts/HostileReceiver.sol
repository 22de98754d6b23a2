// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title HostileReceiver (test only)
/// @notice A party that is a contract and misbehaves when paid. Its owner drives it with `exec`
///         (any call to any target, forwarding value). When it receives ETH it either re-enters the
///         paying contract with `reentryData` (mode REENTER) or refuses the payment (mode REFUSE).
contract HostileReceiver {
    enum Mode {
        ACCEPT,
        REENTER,
        REFUSE
    }

    error Refused();
    error NotOwner();

    address public immutable owner;
    Mode public mode;
    bytes public reentryData;
    /// @notice How many times `receive` tried to re-enter, and whether the last try succeeded.
    uint256 public reentryAttempts;
    bool public lastReentrySucceeded;
    /// @notice The revert data the re-entered call returned (a custom error selector when guarded).
    bytes public lastReentryResult;

    constructor() {
        owner = msg.sender;
    }

    function configure(Mode mode_, bytes calldata reentryData_) external {
        if (msg.sender != owner) revert NotOwner();
        mode = mode_;
        reentryData = reentryData_;
    }

    /// @notice Call `target` with `data`, forwarding `msg.value`; bubbles up a revert unchanged.
    function exec(address target, bytes calldata data) external payable returns (bytes memory) {
        if (msg.sender != owner) revert NotOwner();
        (bool ok, bytes memory ret) = target.call{value: msg.value}(data);
        if (!ok) {
            assembly {
                revert(add(ret, 32), mload(ret))
            }
        }
        return ret;
    }

    receive() external payable {
        if (mode == Mode.REFUSE) revert Refused();
        if (mode == Mode.REENTER && reentryAttempts < 3) {
            reentryAttempts += 1;
            (bool ok, bytes memory ret) = msg.sender.call(reentryData);
            lastReentrySucceeded = ok;
            lastReentryResult = ret;
        }
    }
}
