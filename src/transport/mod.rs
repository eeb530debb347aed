//! How PEs reach each other. Today: node identity (which PEs share a host). The transport seam
//! (one module per transport behind one interface, and the per-PE route table) grows here.

pub mod node;
