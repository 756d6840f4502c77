// The one internal module the benchmarks load from dist/ besides the nodes (bench/lib/dist.ts): section 2b
// times the node's claim statement alone, without the node around it, and the large-table sections
// bulk-load a table made with the node's own DDL. Nothing in the package imports this file; renaming a
// module behind it changes only this file.
export { claimStatement } from './store/claimSql';
export { layoutOf } from './store/tableLayout';
export { tableRef } from './store/tableRef';
export { createTableSql } from './store/tableSchema';
