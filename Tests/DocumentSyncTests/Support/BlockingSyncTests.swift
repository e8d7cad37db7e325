import Testing

/// The suites whose tests block their thread for long (the simulations, real servers, waits
/// for timeouts): one of their tests at a time, so that they never hold more than one of the
/// test runner's cooperative threads (two on two cores) and starve the asynchronous tests
/// running beside them.
@Suite(.serialized) enum BlockingSyncTests {}
