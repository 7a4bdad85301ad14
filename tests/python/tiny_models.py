"""A tiny, randomly initialised causal LM and a tokenizer built in memory, for tests that run real trainers on CPU.

Nothing is downloaded: the tokenizer is a word-level vocabulary trained here, the model a 2-layer GPT-2 with hidden
size 32 built from a config. Importing this module switches the Hugging Face libraries and W&B to offline mode, so
a test that accidentally asks for a hub file fails at once instead of hanging on the network.
"""
import os

OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "WANDB_MODE": "offline",
    "WANDB_SILENT": "true",
    "WANDB_DISABLE_GIT": "true",
    "TOKENIZERS_PARALLELISM": "false",
}
os.environ.update(OFFLINE_ENV)  # forced, not defaulted: a CI box with WANDB_MODE=online must not go online here

# The words of the prompts and of everything the model may say; a closed vocabulary keeps the model tiny.
WORDS = ("the a cat dog sat ran on under mat log big small red blue one two three four five is was and "
         "yes no good bad happy sad").split()
PAD, EOS, UNK = "<pad>", "<eos>", "<unk>"

PROMPTS = [
    "the cat sat on the", "a dog ran under a", "one two three", "the big red", "a small blue",
    "yes or no", "the mat is", "two and two is",
]


def make_tokenizer():
    """A word-level PreTrainedTokenizerFast with pad and eos, trained on WORDS in memory."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token=UNK))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(special_tokens=[PAD, EOS, UNK])
    tok.train_from_iterator([" ".join(WORDS)] + PROMPTS, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=PAD, eos_token=EOS, unk_token=UNK)
    fast.padding_side = "left"  # generation appends to the right
    return fast


def make_model(tokenizer, seed: int = 0):
    """A 2-layer GPT-2 with hidden size 32, random weights (seeded)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    # A model this small gains nothing from threads; on a shared CI box they only fight (6 s vs 1 s per GRPO step).
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=64, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id,
                        pad_token_id=tokenizer.pad_token_id)
    return GPT2LMHeadModel(config)


def prompt_dataset(n: int = 16):
    """A GRPO prompt dataset ("prompt" column), built in memory."""
    from datasets import Dataset

    return Dataset.from_dict({"prompt": [PROMPTS[i % len(PROMPTS)] for i in range(n)]})


def lm_dataset(tokenizer, n: int = 16, length: int = 8):
    """A causal-LM dataset (input_ids, attention_mask, labels) for a plain transformers Trainer."""
    from datasets import Dataset

    rows = {"input_ids": [], "attention_mask": [], "labels": []}
    for i in range(n):
        ids = tokenizer(PROMPTS[i % len(PROMPTS)])["input_ids"][:length]
        ids = ids + [tokenizer.pad_token_id] * (length - len(ids))
        mask = [0 if t == tokenizer.pad_token_id else 1 for t in ids]
        rows["input_ids"].append(ids)
        rows["attention_mask"].append(mask)
        rows["labels"].append([t if m else -100 for t, m in zip(ids, mask)])
    return Dataset.from_dict(rows)


def word_count_reward(completions, **kwargs):
    """Reward: the fraction of known words in a completion (varies between completions, so advantages are not 0)."""
    rewards = []
    for text in completions:
        words = text.split()
        rewards.append(sum(w in WORDS for w in words) / max(len(words), 1) if words else 0.0)
    return rewards
