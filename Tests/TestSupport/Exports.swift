/// The manual clocks come with the kit: a test that imports TestSupport has them too.
@_exported import ClocksTesting
