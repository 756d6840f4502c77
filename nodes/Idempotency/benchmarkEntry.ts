// The one internal module the benchmarks load from dist/ besides the nodes (bench/lib/dist.ts): section 2b
// times the node's claim statement alone, without the node around it, and the large-table sections
// bulk-load a table made with the node's own DDL. Nothing in the package imports this file; renaming a
// module behind it changes only this file.
export { claimStatement } from './store/claims/claimSql';
export { layoutOf } from './store/record/tableLayout';
export { tableRef } from './store/table/tableRef';
export { createTableSql } from './store/table/tableSchema';
