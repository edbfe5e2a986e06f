//! `pisa`: the command-line front of the software Tofino.
fn main() {
    println!("pisa");
}
