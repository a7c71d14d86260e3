enum MicroHTTPServerPlaceholder {}
