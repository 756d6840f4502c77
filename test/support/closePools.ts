// Loaded into every database test file (jest.config.js): the pools the nodes opened in the file end with
// it, so no connection outlives its test file.
